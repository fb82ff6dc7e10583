// Package gittest makes real git repositories for tests, with git
// configured only by the test: no system or user configuration leaks in.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Git runs git in dir and returns its trimmed output; it fails the test
// when git fails.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// NewRepo makes a repository on branch main with one empty commit, in a
// directory whose name has a space, and returns its path.
func NewRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "a repo")
	Git(t, "", "init", "-q", "-b", "main", dir)
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// RacyEdit checks out the tracked file path (relative to the worktree
// dir) afresh, which writes it and the index, and rewrites it with text,
// which must be the size of its committed content, all within one
// second; it returns once a later second has begun. Git's stat data of
// the file then match its index entry's (git compares whole seconds
// unless built with USE_NSEC): only the index's own time, not older than
// the file, tells git to compare the content (its racy-git rule).
func RacyEdit(t testing.TB, dir, path, text string) {
	t.Helper()
	file := filepath.Join(dir, path)
	var second int64
	for try := 0; ; try++ {
		if try == 20 {
			t.Fatal("could not check out and edit a file within one second")
		}
		for time.Now().Nanosecond() > 200e6 {
			time.Sleep(10 * time.Millisecond)
		}
		second = time.Now().Unix()
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
		Git(t, dir, "checkout", "--", path)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if time.Now().Unix() == second {
			break
		}
	}
	for time.Now().Unix() <= second+1 { // well past it: file times come from a coarser clock
		time.Sleep(50 * time.Millisecond)
	}
}

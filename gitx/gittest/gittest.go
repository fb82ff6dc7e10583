// Package gittest makes real git repositories for tests, with git
// configured only by the test: no system or user configuration leaks in.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

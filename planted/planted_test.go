package planted

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/gitx/gittest"
)

// TestAnywhereNotCommitted plants, in a real repository, git directories
// in a tracked, an ignored and an untracked directory, a FIFO .git and a
// .git file, next to a committed fixture; Anywhere finds them all, and
// NotCommitted drops the fixture only while every file at its top is
// tracked, unchanged and as in the start commit (an untracked config
// planted in it counts, and so does one committed since, as the
// container's commits are: with no start commit every one counts).
func TestAnywhereNotCommitted(t *testing.T) {
	dir := gittest.NewRepo(t)
	gitDir := func(rel string) {
		for _, sub := range []string{"objects", "refs"} {
			if err := os.MkdirAll(filepath.Join(dir, rel, sub), 0o755); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(dir, rel, sub, ".keep"), "")
		}
		write(t, filepath.Join(dir, rel, "HEAD"), "ref: refs/heads/x\n")
	}
	gitDir("fixture")
	write(t, filepath.Join(dir, "doc", "readme"), "x")
	write(t, filepath.Join(dir, ".gitignore"), ".idea/\n")
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "fixture")
	start := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	gitDir("doc")
	gitDir(".idea/y")
	gitDir("new/sub")
	write(t, filepath.Join(dir, "split", "HEAD"), "ref: refs/heads/x\n")
	write(t, filepath.Join(dir, "split", "commondir"), "../doc\n")
	write(t, filepath.Join(dir, "src", ".git"), "gitdir: /elsewhere\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "new", ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	found := Anywhere(dir)
	want := []string{".idea/y", "doc", "fixture", "new/.git", "new/sub", "split", "src/.git"}
	if slices.Sort(found); !slices.Equal(found, want) {
		t.Fatalf("Anywhere = %q, want %q", found, want)
	}
	got := NotCommitted(ctx, g, dir, start, found)
	if want := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == "fixture" }); !slices.Equal(got, want) {
		t.Errorf("NotCommitted = %q, want %q", got, want)
	}
	if got := NotCommitted(ctx, g, dir, "", []string{"fixture"}); !slices.Equal(got, []string{"fixture"}) {
		t.Errorf("NotCommitted of the fixture with no start commit = %q, want it", got)
	}
	write(t, filepath.Join(dir, "fixture", "config"), "[core]\n\tfsmonitor = touch PWNED\n")
	if got := NotCommitted(ctx, g, dir, start, []string{"fixture"}); !slices.Equal(got, []string{"fixture"}) {
		t.Errorf("NotCommitted of the fixture with a planted config = %q, want it", got)
	}
	gittest.Git(t, dir, "add", "fixture/config")
	gittest.Git(t, dir, "commit", "-q", "-m", "the container's")
	if got := NotCommitted(ctx, g, dir, start, []string{"fixture"}); !slices.Equal(got, []string{"fixture"}) {
		t.Errorf("NotCommitted of the fixture with a config committed since the start = %q, want it", got)
	}
}

// TestUntrackedTrackedDir gives Untracked what git status names for a git
// directory planted in a tracked directory (its files, not the
// directory), and one split with commondir in an untracked directory;
// Remove takes their own entries and spares the tracked file beside them.
func TestUntrackedTrackedDir(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "doc", "readme"), "x")
	write(t, filepath.Join(dir, "doc", "HEAD"), "ref: refs/heads/x\n")
	write(t, filepath.Join(dir, "doc", "config"), "[core]\n")
	write(t, filepath.Join(dir, "doc", "objects", ".keep"), "")
	write(t, filepath.Join(dir, "doc", "refs", "heads", ".keep"), "")
	write(t, filepath.Join(dir, "split", "HEAD"), "ref: refs/heads/x\n")
	write(t, filepath.Join(dir, "split", "commondir"), "../doc\n")
	write(t, filepath.Join(dir, "lib", "HEAD"), "not a git directory\n")
	got := Untracked(dir, []string{"doc/HEAD", "doc/config", "doc/objects/", "doc/refs/", "split/", "lib/HEAD", "HEAD"})
	if want := []string{"doc", "split"}; !slices.Equal(got, want) {
		t.Fatalf("Untracked = %q, want %q", got, want)
	}
	write(t, filepath.Join(dir, "src", ".git", "config"), "[core]\n")
	if err := Remove(dir, []string{"doc", "split", "src/.git"}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"doc/HEAD", "doc/config", "doc/objects", "doc/refs", "split/HEAD", "split/commondir", "src/.git"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("Remove left %s", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "doc", "readme")); err != nil {
		t.Errorf("Remove took the tracked file beside the git directory: %v", err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

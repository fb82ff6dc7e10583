package planted

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/gitx/gittest"
)

// TestAnywhereNotCommitted plants, in a real repository, git directories
// in a tracked, an ignored and an untracked directory, a FIFO .git and a
// .git file, next to a committed fixture; Anywhere finds them all, and
// NotCommitted drops the fixture only while every file at its top is
// tracked and unchanged (an untracked config planted in it counts).
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
	gitDir("doc")
	gitDir(".idea/y")
	gitDir("new/sub")
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
	want := []string{".idea/y", "doc", "fixture", "new/.git", "new/sub", "src/.git"}
	if slices.Sort(found); !slices.Equal(found, want) {
		t.Fatalf("Anywhere = %q, want %q", found, want)
	}
	got := NotCommitted(ctx, g, dir, found)
	if want := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == "fixture" }); !slices.Equal(got, want) {
		t.Errorf("NotCommitted = %q, want %q", got, want)
	}
	write(t, filepath.Join(dir, "fixture", "config"), "[core]\n\tfsmonitor = touch PWNED\n")
	if got := NotCommitted(ctx, g, dir, []string{"fixture"}); !slices.Equal(got, []string{"fixture"}) {
		t.Errorf("NotCommitted of the fixture with a planted config = %q, want it", got)
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

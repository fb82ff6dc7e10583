package copymode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/gitx/gittest"
)

// TestConflictingAndSettle: after the container's commit changed three
// files, the host holds the commit's version of one (written by the
// exchange), its own change of another (made since the last exchange),
// and the old version of the third, untouched by the user (the container
// left it otherwise uncommitted). Only the user's change stands in the
// way; only the file that holds the commit's version is settled.
func TestConflictingAndSettle(t *testing.T) {
	ctx := context.Background()
	dir := gittest.NewRepo(t)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"written.txt", "user.txt", "left.txt"} {
		write(name, "old\n")
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "commit", "-qm", "from")
	from := gittest.Git(t, dir, "rev-parse", "HEAD")
	for _, name := range []string{"written.txt", "user.txt", "left.txt"} {
		write(name, "new\n")
	}
	gittest.Git(t, dir, "commit", "-qam", "to")
	to := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "reset", "-q", "--hard", from)

	w := Worktree{Dir: dir, StateDir: t.TempDir()}
	m := manifest{Tree: from, Files: map[string]fileStat{}}
	for _, name := range []string{"user.txt", "left.txt"} { // what the last exchange saw
		info, _ := os.Lstat(filepath.Join(dir, name))
		m.Files[name] = statOf(info)
	}
	write("written.txt", "new\n") // the exchange wrote the container's version
	info, _ := os.Lstat(filepath.Join(dir, "written.txt"))
	m.Files["written.txt"] = statOf(info)
	if err := w.saveManifest(m); err != nil {
		t.Fatal(err)
	}
	write("user.txt", "the user's\n") // the user's change since

	git, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.Conflicting(ctx, git, from, to)
	if err != nil || !slices.Equal(got, []string{"user.txt"}) {
		t.Errorf("Conflicting = %q, %v; want only user.txt", got, err)
	}
	write("user.txt", "new\n") // the user takes the container's version
	if err := w.Settle(ctx, git, from, to); err != nil {
		t.Fatal(err)
	}
	m, err = w.loadManifest()
	if err != nil {
		t.Fatal(err)
	}
	info, _ = os.Lstat(filepath.Join(dir, "user.txt"))
	if m.Files["user.txt"] != statOf(info) {
		t.Error("Settle did not record user.txt, which now holds the commit's version")
	}
	if before := m.Files["left.txt"]; before.Size != int64(len("old\n")) {
		t.Errorf("Settle recorded left.txt, which does not hold the commit's version: %+v", before)
	}
}

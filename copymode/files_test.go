package copymode

import (
	"archive/tar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-apex/git-apex/gitx/gittest"
)

func TestParseSnapshot(t *testing.T) {
	tree := strings.Repeat("a", 40)
	got, changes, err := parseSnapshot(tree + "\nM\x00dir/f.txt\x00D\x00gone\x00A\x00new file\x00")
	if err != nil || got != tree || len(changes) != 3 || changes[0].path != "dir/f.txt" || !changes[1].deleted || changes[2].path != "new file" {
		t.Fatalf("parseSnapshot: %q %+v %v", got, changes, err)
	}
	if _, changes, err := parseSnapshot(tree + "\n"); err != nil || len(changes) != 0 {
		t.Errorf("no changes: %+v %v", changes, err)
	}
	for _, bad := range []string{
		"not-a-tree\n",
		tree + "\nM\x00../x\x00",
		tree + "\nM\x00/etc/passwd\x00",
		tree + "\nA\x00.git/config\x00",
		tree + "\nA\x00sub/.GIT/hooks/x\x00",
		tree + "\nX\x00f\x00",
		tree + "\nM\x00",
	} {
		if _, _, err := parseSnapshot(bad); err == nil {
			t.Errorf("parseSnapshot(%q) accepted it", bad)
		}
	}
}

// TestSnapshotRacyEdit runs snapshotFunc (with the host's sh and git)
// on a tracked file rewritten, at the same size, in the second the index
// was written, in a later second (gittest.RacyEdit): the tree must have
// the edit, which only the index's own time tells git to look for, so
// snapshot's copy of the index must keep it.
func TestSnapshotRacyEdit(t *testing.T) {
	dir := gittest.NewRepo(t)
	if err := os.WriteFile(filepath.Join(dir, "tracked.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	gittest.RacyEdit(t, dir, "tracked.txt", "two\n")
	cmd := exec.Command("sh", "-c", snapshotFunc+"snapshot")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_DIR="+filepath.Join(dir, ".git"), "GIT_WORK_TREE="+dir, "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if got := gittest.Git(t, dir, "show", strings.TrimSpace(string(out))+":tracked.txt"); got != "two" {
		t.Errorf("snapshot's tree has tracked.txt as %q; want the edit, two", got)
	}
}

func TestCheckEntry(t *testing.T) {
	w := Worktree{StateDir: t.TempDir()}
	want := map[string]bool{"a.txt": true, "dir/link": true, "up": true, "abs": true}
	for _, c := range []struct {
		hdr  tar.Header
		want string
	}{
		{tar.Header{Name: "a.txt", Typeflag: tar.TypeReg}, ""},
		{tar.Header{Name: "dir/", Typeflag: tar.TypeDir}, ""},
		{tar.Header{Name: "dir/link", Typeflag: tar.TypeSymlink, Linkname: "../a.txt"}, ""},
		{tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader}, ""},
		{tar.Header{Name: "../x", Typeflag: tar.TypeReg}, "leaves the worktree"},
		{tar.Header{Name: "/etc/x", Typeflag: tar.TypeReg}, "leaves the worktree"},
		{tar.Header{Name: ".git/config", Typeflag: tar.TypeReg}, "is in a .git"},
		{tar.Header{Name: "other.txt", Typeflag: tar.TypeReg}, "not a file it said had changed"},
		{tar.Header{Name: "a.txt", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"}, "not a regular file, directory or symlink"},
		{tar.Header{Name: "a.txt", Typeflag: tar.TypeChar}, "not a regular file, directory or symlink"},
	} {
		if got := w.checkEntry(&c.hdr, want, map[string]incoming{}); got != c.want {
			t.Errorf("checkEntry(%s %c -> %s) = %q, want %q", c.hdr.Name, c.hdr.Typeflag, c.hdr.Linkname, got, c.want)
		}
	}
	if got := w.checkEntry(&tar.Header{Name: "a.txt", Typeflag: tar.TypeReg}, want, map[string]incoming{"a.txt": {}}); got != "sent twice" {
		t.Errorf("a second a.txt: %q", got)
	}
}

// TestLinkProblem resolves links as the file system will once the
// changes are placed: through the links the container sent and those on
// the host, never by the text of the target alone.
func TestLinkProblem(t *testing.T) {
	dir := t.TempDir()
	w := Worktree{Dir: dir}
	for _, p := range []string{"a1/b/c/d", "h/x/y"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// On the host: a link to the worktree's top, four levels down, and a
	// link that the changes delete.
	for name, target := range map[string]string{"h/x/y/top": "../../..", "gone": "/etc"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	received := map[string]incoming{
		"a1/b/c/d/s": {link: "../../../.."}, // the worktree's top, sent
		"a1/b/c/d/f": {staged: "x"},
		"loop":       {link: "loop2"},
		"loop2":      {link: "loop"},
	}
	deleted := map[string]bool{"gone": true}
	for _, c := range []struct{ name, target, want string }{
		{"dir/link", "../a.txt", ""},
		{"a1/b/c/d/ok", "s/a1/b", ""},
		{"a1/b/c/d/f2", "f", ""},
		{"gone2", "gone/x", ""},
		{"abs", "/etc/passwd", "a symlink to the absolute path /etc/passwd"},
		{"up", "../..", "a symlink to ../.., which leaves the worktree"},
		{"top", ".", "a symlink to ., which leaves the worktree"},
		{"dot", ".git/config", "a symlink to .git/config, which is in a .git"},
		{"t", "a1/b/c/d/s/../../..", "a symlink to a1/b/c/d/s/../../.., which leaves the worktree"},
		{"u", "h/x/y/top/..", "a symlink to h/x/y/top/.., which leaves the worktree"},
		{"v", "a1/b/c/d/s/.git/hooks", "a symlink to a1/b/c/d/s/.git/hooks, which is in a .git"},
		{"l", "loop", "a symlink to loop, which leaves the worktree"},
	} {
		if got := w.linkProblem(c.name, c.target, received, deleted); got != c.want {
			t.Errorf("linkProblem(%s -> %s) = %q, want %q", c.name, c.target, got, c.want)
		}
	}
}

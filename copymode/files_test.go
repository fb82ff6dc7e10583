package copymode

import (
	"archive/tar"
	"strings"
	"testing"
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
		{tar.Header{Name: "abs", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, "a symlink to the absolute path /etc/passwd"},
		{tar.Header{Name: "up", Typeflag: tar.TypeSymlink, Linkname: "../.."}, "a symlink to ../.., which leaves the worktree"},
		{tar.Header{Name: "up", Typeflag: tar.TypeSymlink, Linkname: ".git/config"}, "a symlink to .git/config, which is in a .git"},
	} {
		if got := w.checkEntry(&c.hdr, want, map[string]incoming{}); got != c.want {
			t.Errorf("checkEntry(%s %c -> %s) = %q, want %q", c.hdr.Name, c.hdr.Typeflag, c.hdr.Linkname, got, c.want)
		}
	}
	if got := w.checkEntry(&tar.Header{Name: "a.txt", Typeflag: tar.TypeReg}, want, map[string]incoming{"a.txt": {}}); got != "sent twice" {
		t.Errorf("a second a.txt: %q", got)
	}
}

package trap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFindPastPathMax: a pipe .gitignore in a directory whose absolute
// path is longer than PATH_MAX, but whose path in the worktree is not
// (git opens it by that one), is found; the walk opens each directory
// through the one above it.
func TestFindPastPathMax(t *testing.T) {
	dir, rel := t.TempDir(), ""
	for len(dir) < 2200 { // the worktree itself: within PATH_MAX
		dir = filepath.Join(dir, strings.Repeat("w", 200))
	}
	for len(dir)+len(rel) < 4200 {
		rel = filepath.Join(rel, strings.Repeat("x", 200))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mkdirDeep(dir, rel); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Remove(dir); removeDeep(dir, rel) })
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := mkfifoAt(fd, filepath.Join(rel, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, rel, ".gitignore")
	found := Find(dir)
	if got := paths(found); !slices.Equal(got, []string{want}) {
		t.Fatalf("Find = %v, want the pipe %d characters from /", got, len(want))
	}
	if _, err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if got := Find(dir); len(got) > 0 {
		t.Errorf("Remove left %v", got)
	}
}

// mkdirDeep makes rel beneath dir by relative paths, from within dir:
// mkdir with the absolute path fails past PATH_MAX.
func mkdirDeep(dir, rel string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	for _, part := range strings.Split(rel, "/") {
		if err := unix.Mkdirat(fd, part, 0o755); err != nil {
			unix.Close(fd)
			return err
		}
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			return err
		}
		fd = next
	}
	return unix.Close(fd)
}

// removeDeep removes the directories mkdirDeep made, deepest first (the
// test's clean-up cannot reach them by their absolute paths).
func removeDeep(dir, rel string) {
	for ; rel != "."; rel = filepath.Dir(rel) {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return
		}
		unix.Unlinkat(fd, rel, unix.AT_REMOVEDIR)
		unix.Close(fd)
	}
}

// mkfifoAt makes a named pipe at rel beneath the directory fd.
func mkfifoAt(fd int, rel string) error {
	return unix.Mknodat(fd, rel, unix.S_IFIFO|0o644, 0)
}

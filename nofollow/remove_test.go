package nofollow

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveAllFollowsNoLink removes a tree, closed directories in it
// too, and a link in its place, never what a link leads to: a parent
// that is a link is refused, named, and its target stays whole.
func TestRemoveAllFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "keep"), []byte("host"), 0o600))
	must(t, os.MkdirAll(filepath.Join(dir, "a/.git/objects/closed"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "a/.git/objects/closed/f"), nil, 0o644))
	must(t, os.Symlink(outside, filepath.Join(dir, "a/.git/out")))
	must(t, os.Chmod(filepath.Join(dir, "a/.git/objects/closed"), 0))
	must(t, os.Symlink(outside, filepath.Join(dir, "b")))
	must(t, os.Symlink(outside, filepath.Join(dir, "c")))

	if err := RemoveAll(dir, "a/.git"); err != nil {
		t.Fatal(err)
	}
	if Exists(dir, "a/.git") || !Exists(dir, "a") {
		t.Error("a/.git is still there, or a went with it")
	}
	var e *Error
	if err := RemoveAll(dir, "b/keep"); !errors.As(err, &e) || e.Part != "b" || e.Why != "is a symbolic link" {
		t.Errorf("through the link b: got %v", err)
	}
	if Exists(dir, "b/keep") {
		t.Error("Exists looked through the link b")
	}
	if err := RemoveAll(dir, "c"); err != nil || Exists(dir, "c") {
		t.Errorf("the link c itself: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("the file a link led to: %v", err)
	}
	if err := RemoveAll(dir, "missing/x"); err != nil {
		t.Errorf("beneath a missing parent: %v", err)
	}
}

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDisarm: set-id bits go from every file in the worktree, never from
// one a link in it points to, and the user's closed directories open.
func TestDisarm(t *testing.T) {
	wt, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "sudo")
	deep := filepath.Join(wt, "a", "closed", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{
		secret:                          0o755 | os.ModeSetuid,
		filepath.Join(wt, "p"):          0o755 | os.ModeSetuid,
		filepath.Join(deep, "q"):        0o750 | os.ModeSetgid,
		filepath.Join(wt, "a", "plain"): 0o644,
	} {
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(wt, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(wt, "a", "closed"), 0); err != nil {
		t.Fatal(err)
	}
	d, err := disarm(wt, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(d.Cleared)
	if want := []string{"a/closed/b/q", "p"}; !slices.Equal(d.Cleared, want) {
		t.Errorf("cleared %q, want %q", d.Cleared, want)
	}
	if want := []string{"a/closed"}; !slices.Equal(d.Opened, want) {
		t.Errorf("opened %q, want %q", d.Opened, want)
	}
	for path, want := range map[string]os.FileMode{
		secret:                   0o755 | os.ModeSetuid,
		filepath.Join(wt, "p"):   0o755,
		filepath.Join(deep, "q"): 0o750,
	} {
		if info, err := os.Lstat(path); err != nil || info.Mode() != want {
			t.Errorf("%s: mode %v (%v), want %v", path, info.Mode(), err, want)
		}
	}
}

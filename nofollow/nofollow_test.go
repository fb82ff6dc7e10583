package nofollow

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRefusesLinks writes through no link: a linked file or parent is
// refused, named, and the file it points at is unchanged.
func TestRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(victim, filepath.Join(dir, "input.json")))
	must(t, os.Symlink(outside, filepath.Join(dir, "hooks")))
	must(t, os.Symlink("missing", filepath.Join(dir, "dangling")))
	must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o644))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	for _, c := range []struct{ name, part, why string }{
		{"input.json", "input.json", "is a symbolic link"},
		{"hooks/victim", "hooks", "is a symbolic link"},
		{"./hooks/new/x", "hooks", "is a symbolic link"},
		{"dangling/x", "dangling", "is a symbolic link"},
		{"file/x", "file", "is not a directory"},
		{"fifo", "fifo", "is not a regular file"},
	} {
		for _, op := range []func() error{
			func() error { return Check(dir, c.name) },
			func() error { return WriteFile(dir, c.name, []byte("payload"), 0o644) },
		} {
			var e *Error
			if err := op(); !errors.As(err, &e) || e.Part != c.part || e.Why != c.why {
				t.Errorf("%s: got %v, want %s %s", c.name, err, c.part, c.why)
			}
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "host" {
		t.Errorf("the host file was written through a link: %q", data)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a directory was made through a link")
	}
	if _, err := MkdirAll(dir, "hooks/sub"); err == nil {
		t.Error("MkdirAll went through a link")
	}
}

// TestWrites makes missing parents and replaces a regular file.
func TestWrites(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "old"), []byte("a longer old content"), 0o644))
	must(t, Check(dir, "a/b/c.txt"))
	must(t, WriteFile(dir, "a/b/c.txt", []byte("new"), 0o644))
	must(t, WriteFile(dir, "old", []byte("new"), 0o644))
	d, err := MkdirAll(dir, "d/e")
	must(t, err)
	defer d.Close()
	sub, err := d.Mkdir("f", 0o755)
	must(t, err)
	defer sub.Close()
	f, err := sub.Create("g", 0o600)
	must(t, err)
	f.Close()
	must(t, sub.Symlink("g", "h"))
	if _, err := sub.Create("h", 0o600); err == nil {
		t.Error("Create opened an existing link")
	}
	if _, err := sub.Mkdir("h", 0o755); err == nil {
		t.Error("Mkdir opened a link")
	}
	if exists, isDir := d.Lstat("f"); !exists || !isDir {
		t.Error("Lstat: f is a directory")
	}
	if exists, isDir := sub.Lstat("h"); !exists || isDir {
		t.Error("Lstat: h is a link")
	}
	for _, name := range []string{"a/b/c.txt", "old"} {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(data) != "new" {
			t.Errorf("%s: %q, %v", name, data, err)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "d", "e")); err != nil || !info.IsDir() {
		t.Errorf("d/e: %v", err)
	}
	if err := WriteFile(dir, "../x", nil, 0o644); err == nil {
		t.Error("wrote above the directory")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

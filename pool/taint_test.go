package pool

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTainted plants in a tree, one at a time, what git's reset and clean
// leave of a container's work, and checks that tainted names each; a
// tree of plain files, directories and a symlink pointing out is clean
// (the symlink is not followed: git's reset put back the commit's).
func TestTainted(t *testing.T) {
	type plant struct {
		name, want string
		plant      func(dir string) error
	}
	cases := []plant{
		{"clean", "", func(string) error { return nil }},
		{"fifo", "the special file sub/fifo", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "sub", "fifo"), 0o644) }},
		{"setuid", "a set-id or sticky bit on sub/file", func(dir string) error {
			return os.Chmod(filepath.Join(dir, "sub", "file"), 0o755|os.ModeSetuid)
		}},
		{"setgid directory", "a set-id or sticky bit on sub", func(dir string) error { return os.Chmod(filepath.Join(dir, "sub"), 0o755|os.ModeSetgid) }},
		{"world-writable", "a world-writable sub/file", func(dir string) error { return os.Chmod(filepath.Join(dir, "sub", "file"), 0o666) }},
		{"hard link", "a second link to ", func(dir string) error { return os.Link(filepath.Join(dir, "sub", "file"), filepath.Join(dir, "link")) }},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, plant{"another owner", "sub/file, owned by another user", func(dir string) error { return os.Lchown(filepath.Join(dir, "sub", "file"), 4321, 4321) }})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sub", "file"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "out")); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(dir); err != nil {
				t.Fatal(err)
			}
			got := tainted(dir, os.Geteuid())
			if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
				t.Errorf("tainted = %q, want %q", got, c.want)
			}
		})
	}
}

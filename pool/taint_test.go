package pool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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
		{"acl", "the extended attribute system.posix_acl_access on sub", func(dir string) error {
			return unix.Lsetxattr(filepath.Join(dir, "sub"), "system.posix_acl_access", aclGranting(2345), 0)
		}},
		{"user xattr", "the extended attribute user.x on sub/file", func(dir string) error {
			return unix.Lsetxattr(filepath.Join(dir, "sub", "file"), "user.x", []byte("1"), 0)
		}},
		{"group-writable, the pool's group", "", func(dir string) error { return os.Chmod(filepath.Join(dir, "sub", "file"), 0o664) }},
		{"hard link", "a second link to ", func(dir string) error { return os.Link(filepath.Join(dir, "sub", "file"), filepath.Join(dir, "link")) }},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, plant{"another owner", "sub/file, owned by another user", func(dir string) error { return os.Lchown(filepath.Join(dir, "sub", "file"), 4321, 4321) }},
			plant{"group-writable, another group", "a group-writable sub of another group", func(dir string) error {
				if err := os.Lchown(filepath.Join(dir, "sub"), -1, 2345); err != nil {
					return err
				}
				return os.Chmod(filepath.Join(dir, "sub"), 0o775)
			}},
			plant{"another group, not group-writable", "", func(dir string) error { return os.Lchown(filepath.Join(dir, "sub", "file"), -1, 2345) }})
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
			if err := c.plant(dir); errors.Is(err, unix.ENOTSUP) {
				t.Skip("no extended attributes on this file system:", err)
			} else if err != nil {
				t.Fatal(err)
			}
			got := tainted(dir, os.Geteuid())
			if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
				t.Errorf("tainted = %q, want %q", got, c.want)
			}
		})
	}
}

// aclGranting is a POSIX ACL in the kernel's xattr form (version 2, then
// tag, perm, id entries of 8 bytes each) giving uid rwx, as
// `setfacl -m u:<uid>:rwx` sets it.
func aclGranting(uid uint32) []byte {
	const undefined = 0xffffffff
	entry := func(tag, perm uint16, id uint32) []byte {
		return []byte{byte(tag), byte(tag >> 8), byte(perm), byte(perm >> 8), byte(id), byte(id >> 8), byte(id >> 16), byte(id >> 24)}
	}
	b := []byte{2, 0, 0, 0}
	b = append(b, entry(0x01, 7, undefined)...) // user owner
	b = append(b, entry(0x02, 7, uid)...)       // named user
	b = append(b, entry(0x04, 5, undefined)...) // group owner
	b = append(b, entry(0x10, 7, undefined)...) // mask
	b = append(b, entry(0x20, 5, undefined)...) // other
	return b
}

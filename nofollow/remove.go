package nofollow

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Exists reports whether name is beneath dir with no symbolic link (and
// nothing but directories) among its parents; name itself may be of any
// type, a link too.
func Exists(dir, name string) bool {
	parent, base, err := walk(dir, name, false)
	if err != nil || parent < 0 {
		return false
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	return unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// RemoveAll deletes name beneath dir and, when it is a directory,
// everything in it, following no link: its parents are opened one at a
// time as Check does, and what it holds is removed through the handle of
// the directory holding it, so that a container swapping a directory for
// a link meanwhile redirects nothing (a link itself is removed, never
// followed). A directory of this user's closed to it (`chmod 0`) is
// opened first. A name already gone, or beneath a missing parent, is no
// error; a parent that is a link is an *Error.
func RemoveAll(dir, name string) error {
	parent, base, err := walk(dir, name, false)
	if err != nil || parent < 0 {
		return err
	}
	defer unix.Close(parent)
	return removeAt(parent, base, filepath.Join(dir, name))
}

// removeAt removes name in the directory fd (at path, for messages), and
// what it holds.
func removeAt(fd int, name, path string) error {
	err := unix.Unlinkat(fd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	sub, err := openDir(fd, name)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	d := os.NewFile(uintptr(sub), path)
	names, err := d.Readdirnames(-1)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		errs = append(errs, removeAt(sub, n, filepath.Join(path, n)))
	}
	d.Close()
	if err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, &os.PathError{Op: "remove", Path: path, Err: err})
	}
	return errors.Join(errs...)
}

// openDir opens the directory name in fd, through no link, able to read
// it and delete what it holds: one of this user's that is closed to it
// is given read, enter and write rights back first.
func openDir(fd int, name string) (int, error) {
	sub, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EACCES) {
		if err = reopen(fd, name); err == nil {
			sub, err = openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(sub, &st); err == nil && st.Mode&0o700 != 0o700 && int(st.Uid) == os.Getuid() {
		unix.Fchmod(sub, uint32(st.Mode)&0o7777|0o700)
	}
	return sub, nil
}

// Open gives this user back read, enter and write rights on its
// directory name beneath dir that it cannot list (`chmod 0111`), through
// no link, as RemoveAll does before it empties one.
func Open(dir, name string) error {
	parent, base, err := walk(dir, name, false)
	if err != nil {
		return err
	}
	if parent < 0 {
		return &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: unix.ENOENT}
	}
	defer unix.Close(parent)
	sub, err := openDir(parent, base)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}
	}
	return unix.Close(sub)
}

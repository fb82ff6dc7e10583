// Package nofollow writes files beneath a directory without following
// any symbolic link: a name that a repository chose (a batch task's
// files, a copy into a new environment) must not reach through a link it
// committed to a file elsewhere on the host. Every part of the name is
// opened one at a time, relative to the directory opened before it, and
// refused when it is a link (or, for a parent, not a directory); the file
// itself is written only when it is a regular file or missing. On Linux
// each open is an openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS;
// elsewhere an openat with O_NOFOLLOW.
package nofollow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Error is a name that cannot be written without following a link or
// writing over something that is not a regular file.
type Error struct {
	Name string // the name asked for, relative to the directory
	Part string // the part of it at fault, relative to the directory
	Why  string // e.g. "is a symbolic link"
}

func (e *Error) Error() string { return e.Part + " " + e.Why }

// Check reports whether name could be written beneath dir: each part of
// it that exists is a real directory, and the file, if it exists, a
// regular file. It writes nothing.
func Check(dir, name string) error {
	parent, base, err := walk(dir, name, false)
	if err != nil || parent < 0 {
		return err
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	err = unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return err
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return &Error{Name: name, Part: clean(name), Why: "is a symbolic link"}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return &Error{Name: name, Part: clean(name), Why: "is not a regular file"}
	}
	return nil
}

// Dir is a directory opened through no symbolic link, to make entries
// in without following one either: a container that swaps a directory
// for a link meanwhile does not redirect what is written.
type Dir struct {
	fd   int
	path string // for messages
}

// MkdirAll opens name beneath dir as a Dir, making it and its parents
// (0755) as needed, following no link.
func MkdirAll(dir, name string) (*Dir, error) {
	fd, _, err := walk(dir, filepath.Join(name, "x"), true)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, path: filepath.Join(dir, name)}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Lstat reports whether name exists in d, and whether it is a directory
// (a link to one is not).
func (d *Dir) Lstat(name string) (exists, isDir bool) {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false, false
	}
	return true, st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// Mkdir opens the directory name in d, making it (perm) when missing; a
// link or anything else there is an *Error.
func (d *Dir) Mkdir(name string, perm os.FileMode) (*Dir, error) {
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, name), Err: err}
	}
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, refused(d.fd, filepath.Join(d.path, name), name, err, "is not a directory")
	}
	return &Dir{fd: fd, path: filepath.Join(d.path, name)}, nil
}

// Create makes the file name in d (perm) and opens it for writing; it
// fails when anything, a link included, is there already.
func (d *Dir) Create(name string, perm os.FileMode) (*os.File, error) {
	fd, err := openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// Symlink makes name in d a symbolic link to target.
func (d *Dir) Symlink(target, name string) error {
	if err := unix.Symlinkat(target, d.fd, name); err != nil {
		return &os.PathError{Op: "symlink", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// Chtimes sets the access and modification times of name in d, or of
// the link itself when name is one.
func (d *Dir) Chtimes(name string, atime, mtime time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(d.fd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "chtimes", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// WriteFile writes data to name beneath dir, making its missing parent
// directories (0755) and the file (perm) as needed, following no link;
// an existing regular file is replaced in place.
func WriteFile(dir, name string, data []byte, perm os.FileMode) error {
	parent, base, err := walk(dir, name, true)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	// O_NONBLOCK: opening a FIFO never waits for a reader; O_NOCTTY: a
	// terminal device put there never becomes ours.
	fd, err := openat(parent, base, unix.O_WRONLY|unix.O_CREAT|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return refused(parent, name, clean(name), err, "is not a regular file")
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, name))
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return &Error{Name: name, Part: clean(name), Why: "is not a regular file"}
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

// walk opens dir, then each parent directory of name beneath it, one part
// at a time, making missing ones when create is set. It returns the
// descriptor of name's parent (or -1 when a part is missing and create is
// not set) and name's last part.
func walk(dir, name string, create bool) (parent int, base string, err error) {
	rel := clean(name)
	if rel == "." || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, "", fmt.Errorf("%q is not a name beneath %s", name, dir)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	parts := strings.Split(rel, "/")
	for i, part := range parts[:len(parts)-1] {
		next, err := openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, part, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil {
			err = refused(fd, name, strings.Join(parts[:i+1], "/"), err, "is not a directory")
		}
		unix.Close(fd)
		if errors.Is(err, unix.ENOENT) && !create {
			return -1, parts[len(parts)-1], nil
		}
		if err != nil {
			return -1, "", err
		}
		fd = next
	}
	return fd, parts[len(parts)-1], nil
}

// refused names what stood in the way of opening part (its last element
// in the directory fd): a symbolic link (which O_DIRECTORY reports as
// ENOTDIR, and O_NOFOLLOW as ELOOP, or EMLINK on FreeBSD), or something
// else (what).
func refused(fd int, name, part string, err error, what string) error {
	if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.EMLINK) && !errors.Is(err, unix.ENOTDIR) &&
		!errors.Is(err, unix.ENXIO) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EXDEV) {
		return &os.PathError{Op: "open", Path: part, Err: err}
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, filepath.Base(part), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		what = "is a symbolic link"
	}
	return &Error{Name: name, Part: part, Why: what}
}

// clean is name cleaned, with slashes.
func clean(name string) string { return filepath.ToSlash(filepath.Clean(name)) }

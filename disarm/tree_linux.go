package disarm

import (
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/git-apex/git-apex/planted"
)

// disarm walks dir by handles (each entry looked at beneath its own
// directory's handle, no link followed: a container that swaps a
// directory for a link while the walk runs changes nothing outside),
// clearing set-id bits and, with open, opening the user's closed
// directories.
func disarm(dir string, open bool) (Result, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Result{}, err
	}
	w := disarmer{open: open, uid: uint32(os.Getuid())}
	w.walk(fd, "", false)
	return w.d, nil
}

type disarmer struct {
	d    Result
	open bool
	uid  uint32
}

// walk disarms the directory open at fd (rel to the worktree), and
// closes fd; owned says that a directory above, another user's, is
// noted in Others already.
func (w *disarmer) walk(fd int, rel string, owned bool) {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		w.d.Closed = append(w.d.Closed, rel)
		return
	}
	if rel != "" && filepath.Base(rel) != ".git" && planted.GitDirNames(names) {
		w.d.GitDirs = append(w.d.GitDirs, filepath.ToSlash(rel))
	}
	for _, name := range names {
		path := filepath.Join(rel, name)
		if name == ".git" && rel != "" {
			w.d.GitDirs = append(w.d.GitDirs, filepath.ToSlash(path))
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		other := w.uid != 0 && st.Uid != w.uid
		if other && !owned {
			w.d.Others = append(w.d.Others, path)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			if st.Mode&(unix.S_ISUID|unix.S_ISGID) == 0 {
				break
			}
			if w.chmod(fd, name, unix.S_IFREG, func(m uint32) uint32 { return m &^ (unix.S_ISUID | unix.S_ISGID) }) {
				w.d.Cleared = append(w.d.Cleared, path)
			} else {
				w.d.Stuck = append(w.d.Stuck, path)
			}
		case unix.S_IFDIR:
			if other && !emptiable(fd, name) {
				w.d.Foreign = append(w.d.Foreign, path)
				continue
			}
			if w.open && st.Uid == w.uid && st.Mode&0o700 != 0o700 && w.chmod(fd, name, unix.S_IFDIR, func(m uint32) uint32 { return m | 0o700 }) {
				w.d.Opened = append(w.d.Opened, path)
			}
			sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				w.d.Closed = append(w.d.Closed, path)
				continue
			}
			w.walk(sub, path, owned || other)
		}
	}
}

// emptiable reports whether this user can delete what the directory name
// beneath fd holds: nothing, or it may write and enter it.
func emptiable(fd int, name string) bool {
	if unix.Faccessat(fd, name, unix.W_OK|unix.X_OK, 0) == nil {
		return true
	}
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(sub), name)
	defer f.Close()
	_, err = f.Readdirnames(1)
	return err == io.EOF
}

// chmod changes the mode of the entry name beneath fd, if it still is of
// type kind, through a handle that followed no link (chmod on
// /proc/self/fd/N of an O_PATH handle changes that very inode).
func (w *disarmer) chmod(fd int, name string, kind uint32, change func(uint32) uint32) bool {
	h, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(h)
	var st unix.Stat_t
	if unix.Fstat(h, &st) != nil || st.Mode&unix.S_IFMT != kind {
		return false
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(h), change(st.Mode&0o7777)) == nil
}

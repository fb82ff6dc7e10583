package nofollow

import (
	"errors"
	"strconv"

	"golang.org/x/sys/unix"
)

// openat opens one part beneath the directory fd: it fails with ELOOP on
// a symbolic link (and EXDEV on anything that would leave fd). A kernel
// without openat2 (before 5.6) gets openat with O_NOFOLLOW, which for a
// single part refuses the same links.
func openat(fd int, part string, flags int, mode uint32) (int, error) {
	nfd, err := unix.Openat2(fd, part, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW),
		Mode:    uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		return unix.Openat(fd, part, flags|unix.O_NOFOLLOW, mode)
	}
	return nfd, err
}

// reopen gives this user read, enter and write rights back on its
// directory name in fd, which it cannot open (`chmod 0`): through a
// handle that followed no link (chmod on /proc/self/fd/N of an O_PATH
// handle changes that very inode).
func reopen(fd int, name string) error {
	h, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(h)
	var st unix.Stat_t
	if err := unix.Fstat(h, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.ENOTDIR
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(h), st.Mode&0o7777|0o700)
}

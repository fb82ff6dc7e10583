package nofollow

import (
	"errors"

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

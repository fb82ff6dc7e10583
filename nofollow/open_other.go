//go:build !linux

package nofollow

import "golang.org/x/sys/unix"

// openat opens one part beneath the directory fd; O_NOFOLLOW makes it
// fail (ELOOP) on a symbolic link, and a single part cannot leave fd.
func openat(fd int, part string, flags int, mode uint32) (int, error) {
	return unix.Openat(fd, part, flags|unix.O_NOFOLLOW, mode)
}

// reopen cannot open a closed directory without following a link here:
// it stays closed.
func reopen(int, string) error { return unix.EACCES }

package sandbox

import (
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/git-apex/git-apex/gitx"
)

// peek reads the sandbox's tip from its ref file, as data: it follows no
// link, opens nothing but a regular file, and never blocks. ok is false
// when the file is not a plain loose ref (packed, symbolic, or tampered
// with): the caller must then ask the container.
func (s *Sandbox) peek() (tip string, ok bool) {
	dir, err := unix.Open(s.gitDir(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, s.ref, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", false
	}
	f := os.NewFile(uintptr(fd), s.ref)
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	buf := make([]byte, 128)
	n, _ := io.ReadFull(f, buf)
	tip = strings.TrimSpace(string(buf[:n]))
	if !gitx.IsObjectID(tip) {
		return "", false
	}
	return tip, true
}

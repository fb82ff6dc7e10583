package pool

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// xattrOn is the name of an extended attribute set on path (no link
// followed), "" when none. security.selinux is the system's label, on
// every file where SELinux runs, not a container's doing.
func xattrOn(path string) string {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err == unix.ERANGE {
		return "(too many to list)"
	}
	if err != nil || n <= 0 {
		return ""
	}
	for _, name := range bytes.Split(buf[:n], []byte{0}) {
		if len(name) > 0 && string(name) != "security.selinux" {
			return string(name)
		}
	}
	return ""
}

package container

import "strings"

// keptCaps are the capabilities a container keeps, of Docker's default
// set: what a shell, a package manager and a build need (owning and
// reading files, switching users, signalling its own processes, binding
// low ports). Raw sockets, device nodes, chroot, file capabilities and
// the rest are dropped.
var keptCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"}

// CapsFor is what a container running as user keeps: keptCaps for root
// (a numeric 0, "root", or the image's own user), none for anyone else.
// Docker gives a process that is not root no capabilities anyway, but
// podman leaves them to it: a container as the host's uid could chown a
// file to root there, and one re-planting a set-user-id bit after
// git-apex cleared it made a root shell on the host.
func CapsFor(user string) []string {
	name, _, _ := strings.Cut(user, ":")
	if name == "" || name == "0" || name == "root" {
		return keptCaps
	}
	return nil
}

package repo

import (
	"os"
	"strconv"
	"syscall"
)

// HostUser is the uid and gid a full env's container runs as by default
// ([container].user = "host"): git-apex's own; when git-apex runs as
// root, the user sudo ran it for (SUDO_UID and SUDO_GID), else the owner
// of the main checkout's directory, so that `sudo git apex` or a root
// cron job on a user's repository never gives its containers root (a
// root-owned checkout keeps root: it is root's own work).
func (r *Repo) HostUser() (uid, gid int) {
	uid, gid = os.Getuid(), os.Getgid()
	if uid != 0 {
		return uid, gid
	}
	su, uerr := strconv.Atoi(os.Getenv("SUDO_UID"))
	sg, gerr := strconv.Atoi(os.Getenv("SUDO_GID"))
	if uerr == nil && gerr == nil && su >= 0 && sg >= 0 {
		return su, sg
	}
	if info, err := os.Stat(r.Git.MainRoot()); err == nil {
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			return int(st.Uid), int(st.Gid)
		}
	}
	return uid, gid
}

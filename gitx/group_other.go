//go:build !linux

package gitx

import "syscall"

// ownGroup is how a git that is not in the foreground runs (see
// command.foreground): in a process group of its own. Here a git-apex
// killed mid-way (SIGKILL) leaves the git it ran to finish on its own:
// only Linux kills it with git-apex (Pdeathsig).
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

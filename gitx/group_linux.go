package gitx

import "syscall"

// ownGroup is how a git that is not in the foreground runs (see
// command.foreground): in a process group of its own, killed when
// git-apex dies (SIGKILL, Pdeathsig), as it was when a kill of
// git-apex's group (`kill -9 -PGID`, a supervisor's) reached it too: a
// git-apex killed mid-way leaves no git running on.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

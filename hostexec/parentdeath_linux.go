package hostexec

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// DieWithGit asks the kernel to send this process SIGTERM when its parent
// dies, if that parent is git. `git apex serve` runs git-apex as git's
// child (and git-apex replaces itself with the engine), so a supervisor
// or a user that kill -9s the pid it started, git's, would otherwise
// leave the server running under init, holding its socket. A parent that
// is not git (a shell that ran git-apex itself) is left alone: its exit,
// after nohup say, must not end the server. The request belongs to this
// process, not to one thread, so no thread needs locking.
func DieWithGit() {
	parent := os.Getppid()
	exe, err := os.Readlink("/proc/" + strconv.Itoa(parent) + "/exe")
	if err != nil || filepath.Base(exe) != "git" {
		return
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return
	}
	if os.Getppid() != parent { // git died before the request
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}

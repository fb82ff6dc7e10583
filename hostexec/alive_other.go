//go:build !linux && !darwin

package hostexec

import (
	"errors"
	"syscall"
)

// startTime is 1 while a process runs and 0 when it does not. This system
// tells git-apex no start time, so a PID the kernel gives to another
// process is taken for the first: a lease or intent then waits for that
// process to end.
func startTime(pid int) int64 {
	if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		return 1
	}
	return 0
}

// startTimeOf is startTime: a zombie is told from a running process here
// by nothing.
func startTimeOf(pid int, _ bool) int64 { return startTime(pid) }

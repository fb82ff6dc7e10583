package hostexec

import "os"

// A process is named by its PID and its start time, so that a PID the
// kernel has given to another process since is not taken for it: leases
// of pool slots and intents record both.

// Self is this process's PID and start time.
func Self() (pid int, start int64) {
	pid = os.Getpid()
	return pid, startTime(pid)
}

// Alive reports whether the process pid, started at start, still runs.
func Alive(pid int, start int64) bool {
	return pid != 0 && startTime(pid) == start
}

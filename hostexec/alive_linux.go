package hostexec

import "strconv"

// startTime is a process's start time (clock ticks since boot, from
// /proc), or 0 when it is not running.
func startTime(pid int) int64 {
	fields := stat(pid)
	if len(fields) < 20 {
		return 0
	}
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	return start
}

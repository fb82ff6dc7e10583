package hostexec

import "strconv"

// startTime is a process's start time (clock ticks since boot, from
// /proc), or 0 when it is not running: gone, or a zombie (dead, with
// nothing open) that its parent has not reaped yet. A killed process
// whose parent died with it stays a zombie until init reaps it, which an
// init in a container may never do.
func startTime(pid int) int64 { return startTimeOf(pid, false) }

// startTimeOf is startTime, of a zombie too when zombies.
func startTimeOf(pid int, zombies bool) int64 {
	fields := stat(pid)
	if len(fields) < 20 || fields[0] == "X" || fields[0] == "Z" && !zombies {
		return 0
	}
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	return start
}

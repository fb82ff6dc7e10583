package hostexec

import "golang.org/x/sys/unix"

// sZomb is the state of a zombie in the kernel's process table (SZOMB
// in sys/proc.h).
const sZomb = 5

// startTime is a process's start time (microseconds since the epoch, from
// the kernel's process table), or 0 when it is not running: gone, or a
// zombie its parent has not reaped yet.
func startTime(pid int) int64 { return startTimeOf(pid, false) }

// startTimeOf is startTime, of a zombie too when zombies.
func startTimeOf(pid int, zombies bool) int64 {
	info, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || info.Proc.P_pid != int32(pid) || info.Proc.P_stat == sZomb && !zombies {
		return 0
	}
	t := info.Proc.P_starttime
	return int64(t.Sec)*1_000_000 + int64(t.Usec)
}

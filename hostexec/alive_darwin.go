package hostexec

import "golang.org/x/sys/unix"

// startTime is a process's start time (microseconds since the epoch, from
// the kernel's process table), or 0 when it is not running.
func startTime(pid int) int64 {
	info, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || info.Proc.P_pid != int32(pid) {
		return 0
	}
	t := info.Proc.P_starttime
	return int64(t.Sec)*1_000_000 + int64(t.Usec)
}

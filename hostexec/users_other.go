//go:build !linux

package hostexec

import "syscall"

// users finds nothing: this system has no /proc to read a process's
// directories and open files from, and git-apex does not look for them
// another way (the README says so).
func users([]string) map[string][]Process { return nil }

// ended reports whether p no longer runs.
func ended(p Process) bool { return !Alive(p.PID, p.start) }

// members finds the leader of g only, while it runs: this system has no
// /proc to find the other processes of a group by.
func members(g Group) []Process {
	if !Alive(g.ID, g.Start) {
		return nil
	}
	return []Process{{PID: g.ID, start: g.Start}}
}

// groupRuns reports whether a process of the process group pgid still
// exists.
func groupRuns(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

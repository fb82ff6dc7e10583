//go:build !linux

package hostexec

import "syscall"

// find finds the leader of each trace's Group only, while it runs: this
// system has no /proc to read a process's directories, open files,
// environment or group from, and git-apex does not look for them another
// way (the README says so).
func find(traces []Trace) [][]Process {
	found := make([][]Process, len(traces))
	for i, t := range traces {
		if g := t.Group; g.ID > 0 && Alive(g.ID, g.Start) {
			found[i] = []Process{{PID: g.ID, start: g.Start}}
		}
	}
	return found
}

// ended reports whether p no longer runs.
func ended(p Process) bool { return !Alive(p.PID, p.start) }

// ownGroups is the process group of git-apex, as a set: find finds
// no process's group here, so it is not asked about any other.
func ownGroups() map[int]bool { return map[int]bool{syscall.Getpgrp(): true} }

// isStopped reports whether p is stopped: this system has no /proc to
// tell, and a process sent SIGSTOP is taken as stopped.
func isStopped(Process) bool { return true }

// groupRuns reports whether a process of the process group pgid still
// exists.
func groupRuns(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

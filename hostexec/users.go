package hostexec

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A Process is a process on this machine that Find (or Users, or
// Members) found: one that uses a directory (its working directory, its
// root, its program or one of its open files lies there), carries a
// mark, or is in a process group.
type Process struct {
	PID     int
	Command string // its command name
	start   int64  // its start time, so that a reused PID is not taken for it
	group   int    // its process group, where known
	task    bool   // found by a Trace's Mark or Group, not by its Dir only
}

// String names the process: "process 41 (sleep)".
func (p Process) String() string { return fmt.Sprintf("process %d (%s)", p.PID, p.Command) }

// Describe names processes in a message: "process 41 (sleep)", or
// "processes 41 (sleep), 42 (node)".
func Describe(procs []Process) string {
	if len(procs) == 1 {
		return procs[0].String()
	}
	names := make([]string, len(procs))
	for i, p := range procs {
		names[i] = fmt.Sprintf("%d (%s)", p.PID, p.Command)
	}
	return "processes " + strings.Join(names, ", ")
}

// Users finds, in one pass over the processes of this machine, those
// that use each of dirs (reached through links or not): their working
// directory, their root, their program or an open file is the
// directory or below it.
// The answer maps each of dirs, as given, that has users to them, by
// PID. Left out are git-apex itself, the processes that started it (the
// caller's own directory is the caller's rule), the processes it started
// (git, the policy's hooks), processes this user may not inspect, and
// processes in another mount namespace (a container's: they end with
// it). On Linux it reads /proc; elsewhere it finds nothing.
func Users(dirs []string) map[string][]Process {
	if len(dirs) == 0 {
		return nil
	}
	traces := make([]Trace, len(dirs))
	for i, d := range dirs {
		traces[i].Dir = d
	}
	byDir := map[string][]Process{}
	for i, procs := range Find(traces) {
		if len(procs) > 0 {
			byDir[dirs[i]] = procs
		}
	}
	return byDir
}

// UsersOf is Users of one directory.
func UsersOf(dir string) []Process { return Users([]string{dir})[dir] }

// within reports whether path is dir or below it; both are clean and
// absolute.
func within(path, dir string) bool {
	rest, ok := strings.CutPrefix(path, dir)
	return ok && (rest == "" || rest[0] == filepath.Separator || dir == "/")
}

// End ends procs: SIGTERM, then SIGKILL to those still running after
// grace. It fails naming the processes that outlive SIGKILL too (another
// user's, or stuck in the kernel) after another grace.
func End(procs []Process, grace time.Duration) error {
	signal := func(sig syscall.Signal) []Process {
		var left []Process
		for _, p := range procs {
			if !ended(p) {
				syscall.Kill(p.PID, sig)
				left = append(left, p)
			}
		}
		return left
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if procs = signal(sig); len(procs) == 0 {
			return nil
		}
		for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if procs = unended(procs); len(procs) == 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("%s still running after SIGKILL", Describe(procs))
}

// unended is those of procs that have not ended.
func unended(procs []Process) []Process {
	var left []Process
	for _, p := range procs {
		if !ended(p) {
			left = append(left, p)
		}
	}
	return left
}

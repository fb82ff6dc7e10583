package hostexec

import (
	"fmt"
	"syscall"
	"time"
)

// EndAll ends the processes find finds and every process they start as
// they are ended, so that none escapes by forking between a pass that
// finds it and the signal that ends it (a process that forks anew each
// generation, a double fork under way). find is one pass (Find of some
// traces): it must find the children of what it finds too (as a mark
// does, which they inherit).
//
// It first freezes them (stopAll): SIGSTOP to each found, and passes
// again until a few in a row find no process that is not stopped (see
// quietPasses), and its process group whole; a stopped
// process cannot fork. Then SIGTERM and SIGCONT to them all, so that
// they may end as they choose, within grace; then it freezes again what
// still runs or what they started meanwhile, and sends SIGKILL, which
// ends a stopped process too. It returns what it ended, and fails
// naming what a last pass still finds (another user's, stuck in the
// kernel).
func EndAll(find func() []Process, grace time.Duration) ([]Process, error) {
	var ended []Process
	seen := map[procKey]bool{}
	note := func(procs []Process) {
		for _, p := range procs {
			if k := keyOf(p); !seen[k] {
				seen[k] = true
				ended = append(ended, p)
			}
		}
	}
	frozen, groups := stopAll(find)
	if len(frozen) == 0 {
		return nil, nil
	}
	note(frozen)
	signalAll(frozen, groups, syscall.SIGTERM)
	signalAll(frozen, groups, syscall.SIGCONT)
	waitEnded(frozen, grace)
	if frozen, groups = stopAll(find); len(frozen) > 0 {
		note(frozen)
		signalAll(frozen, groups, syscall.SIGKILL)
		waitEnded(frozen, grace)
	}
	if left := find(); len(left) > 0 {
		return ended, fmt.Errorf("%s still running after SIGKILL", Describe(left))
	}
	return ended, nil
}

// stopRounds bounds stopAll's passes: a process that another process
// keeps continuing (SIGCONT) is not waited for forever; what it then
// starts is found by EndAll's last pass.
const stopRounds = 500

// quietPasses is how many passes in a row stopAll wants to find nothing
// running: a process that forks and exits at once may be gone when a
// pass looks at it, and its child not read yet; a pass takes some
// milliseconds.
const quietPasses = 3

// stopAll stops (SIGSTOP) what find finds, pass after pass, until
// quietPasses passes in a row find none that is not stopped: it returns
// them all, and the
// process groups it stopped whole. The group of a process found by a
// mark or a task's group (a task's, or one a task's process made with
// setsid) is stopped whole, with one signal: the kernel passes it on to
// a child being forked too, which a pass may not have seen yet. Never
// stopped whole is the group of git-apex or of a process that started
// it.
func stopAll(find func() []Process) ([]Process, []int) {
	var stopped []Process
	var groups []int
	sent, own := map[procKey]bool{}, ownGroups()
	for round, quiet := 0, 0; round < stopRounds && quiet < quietPasses; round++ {
		running := 0
		for _, p := range find() {
			if p.task && p.group > 0 && !own[p.group] {
				own[p.group] = true // stopped once: not again
				groups = append(groups, p.group)
				syscall.Kill(-p.group, syscall.SIGSTOP)
			}
			k := keyOf(p)
			if !sent[k] {
				sent[k] = true
				stopped = append(stopped, p)
			} else if isStopped(p) {
				continue
			}
			running++
			syscall.Kill(p.PID, syscall.SIGSTOP)
		}
		if running == 0 {
			quiet++
			continue
		}
		quiet = 0
		if round > 0 {
			time.Sleep(time.Millisecond) // let a signalled process reach its stop
		}
	}
	return stopped, groups
}

// procKey is what tells one process from another: a PID is reused.
type procKey struct {
	pid   int
	start int64
}

func keyOf(p Process) procKey { return procKey{p.PID, p.start} }

// signalAll sends sig to those of procs that still run, and to groups.
func signalAll(procs []Process, groups []int, sig syscall.Signal) {
	for _, g := range groups {
		syscall.Kill(-g, sig)
	}
	for _, p := range procs {
		if !ended(p) {
			syscall.Kill(p.PID, sig)
		}
	}
}

// waitEnded waits, up to grace, for procs to end.
func waitEnded(procs []Process, grace time.Duration) {
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if procs = unended(procs); len(procs) == 0 {
			return
		}
	}
}

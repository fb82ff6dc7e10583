package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// The warm pool keeps detached worktrees ("slots") ready under
// <git common dir>/apex/pool, at the base's commit. A slot is idle or
// leased to one process; a lease records the holder's PID and start time,
// so a slot whose holder died is reclaimed (reset and made idle) by the
// next acquire or by `pool status`. Slots are made and switched with the
// repository's hooks disabled: an env made from a slot has not run
// post-checkout.

// poolDir is where the slots live.
func (m *Manager) poolDir() string { return filepath.Join(m.Git.ApexDir(), "pool") }

// holder identifies this process in leases.
func holder() (int, int64) {
	pid := os.Getpid()
	return pid, processStart(pid)
}

// processStart is a process's start time (clock ticks since boot, from
// /proc), or 0 when it is not running.
func processStart(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after its closing parenthesis; starttime is field 22.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	return start
}

// holderAlive reports whether a lease's holder still runs.
func holderAlive(s *state.Slot) bool {
	return s.HolderPID != 0 && processStart(s.HolderPID) == s.HolderStart
}

// poolCommit is the commit new and released slots sit at: the default
// base's tip.
func (m *Manager) poolCommit(ctx context.Context) (string, error) {
	pol, err := m.Policy()
	if err != nil {
		return "", err
	}
	base := pol.Worktree.Base
	if base == "" {
		if m.Git.Head == "" { // a bare clone: its HEAD
			return m.Git.Commit(ctx, "HEAD")
		}
		worktrees, err := m.Git.Worktrees(ctx)
		if err != nil {
			return "", err
		}
		if base = worktrees[0].Branch; base == "" {
			return worktrees[0].Head, nil
		}
	}
	return m.Git.Commit(ctx, base)
}

// PoolWarm makes slots until the pool has size of them (idle or leased).
// It returns the slots.
func (m *Manager) PoolWarm(ctx context.Context, size int) ([]*state.Slot, error) {
	if _, err := m.reclaim(ctx, nil); err != nil {
		return nil, err
	}
	commit, err := m.poolCommit(ctx)
	if err != nil {
		return nil, err
	}
	for {
		slot, err := m.newSlot(ctx, commit, 0, 0, size)
		if err != nil {
			return nil, err
		}
		if slot == nil {
			return m.Store.Slots(ctx)
		}
	}
}

// newSlot makes one slot at commit, leased to pid (0: idle), unless the
// pool has limit slots already: then it returns nil. The count is taken
// under the repository lock, so that warmers running at once (every
// pooled start tops the pool up) never make more than limit between them.
func (m *Manager) newSlot(ctx context.Context, commit string, pid int, start int64, limit int) (*state.Slot, error) {
	lk, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if slots, err := m.Store.Slots(ctx); err != nil || len(slots) >= limit {
		return nil, err
	}
	if err := os.MkdirAll(m.poolDir(), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(m.poolDir(), "slot-")
	if err != nil {
		return nil, err
	}
	os.Remove(dir) // git worktree add makes it
	if err := lk.AddDetached(ctx, dir, commit); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot make a pool slot: %w", err)
	}
	slot, err := m.Store.AddSlot(ctx, dir, commit, pid, start)
	if err != nil {
		lk.RemoveWorktree(context.WithoutCancel(ctx), dir, true)
	}
	return slot, err
}

// reclaim resets the slots whose holder is gone and makes them idle. It
// returns how many it reclaimed. held is the repository lock when the
// caller holds it (the lock is not reentrant), else nil.
func (m *Manager) reclaim(ctx context.Context, held *gitx.Locked) (int, error) {
	slots, err := m.Store.Slots(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range slots {
		if !s.Leased() || holderAlive(s) {
			continue
		}
		if err := m.resetSlot(ctx, held, s, false); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// resetSlot puts a slot back at its pool commit, clean, and idle. A slot
// whose directory is gone is forgotten. A contained slot (a container
// worked in it) is reset without entering its submodules, whose .git
// files the container could have pointed anywhere: one whose pool commit
// has submodules is removed instead.
func (m *Manager) resetSlot(ctx context.Context, held *gitx.Locked, s *state.Slot, contained bool) error {
	if exists(s.Path) {
		err := m.Git.ResetClean(ctx, s.Path, s.PoolCommit, contained)
		if err == nil {
			return m.Store.Free(ctx, s.ID, s.PoolCommit)
		}
		if !errors.Is(err, gitx.ErrSubmodules) {
			return fmt.Errorf("cannot reset pool slot %s: %w", s.Path, err)
		}
	}
	lk := held
	if lk == nil {
		var err error
		if lk, err = m.lock(ctx); err != nil {
			return err
		}
		defer lk.Unlock()
	}
	if err := lk.RemoveWorktree(ctx, s.Path, true); err != nil && exists(s.Path) {
		return err
	}
	return m.Store.DropSlot(ctx, s.ID)
}

// PoolStatus reclaims slots whose holder died, then lists the slots.
func (m *Manager) PoolStatus(ctx context.Context) ([]*state.Slot, int, error) {
	n, err := m.reclaim(ctx, nil)
	if err != nil {
		return nil, n, err
	}
	slots, err := m.Store.Slots(ctx)
	return slots, n, err
}

// PoolDrain removes the idle slots and returns how many.
func (m *Manager) PoolDrain(ctx context.Context) (int, error) {
	if _, err := m.reclaim(ctx, nil); err != nil {
		return 0, err
	}
	slots, err := m.Store.Slots(ctx)
	if err != nil {
		return 0, err
	}
	lk, err := m.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer lk.Unlock()
	n := 0
	for _, s := range slots {
		if s.Leased() {
			continue
		}
		if err := lk.RemoveWorktree(ctx, s.Path, true); err != nil && exists(s.Path) {
			return n, err
		}
		if err := m.Store.DropSlot(ctx, s.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Lease is a slot held by this process.
type Lease struct {
	Slot      *state.Slot
	commit    string // checked out in it
	contained bool   // a container worked in it
}

// Path is where the leased slot is.
func (l *Lease) Path() string { return l.Slot.Path }

// Acquire leases a slot at commit: an idle one, else a new one while the
// pool has fewer than limit slots, else it waits (until timeout) for one
// to be released. Switching the slot costs what differs from its commit.
func (m *Manager) Acquire(ctx context.Context, commit string, limit int, timeout time.Duration) (*Lease, error) {
	pid, start := holder()
	deadline := time.Now().Add(timeout)
	for wait := 10 * time.Millisecond; ; wait = min(wait*2, 200*time.Millisecond) {
		slot, err := m.Store.Lease(ctx, pid, start)
		if err != nil {
			return nil, err
		}
		if slot == nil {
			if reclaimed, err := m.reclaim(ctx, nil); err != nil {
				return nil, err
			} else if reclaimed > 0 {
				continue
			}
			if slot, err = m.newSlot(ctx, commit, pid, start, limit); err != nil {
				return nil, err
			}
		}
		if slot != nil {
			if err := m.Git.CheckoutDetached(ctx, slot.Path, commit); err != nil {
				m.Release(context.WithoutCancel(ctx), &Lease{Slot: slot})
				return nil, err
			}
			return &Lease{Slot: slot, commit: commit}, nil
		}
		if time.Now().After(deadline) {
			return nil, exitcode.New(exitcode.Refused, "no pool slot was free within %v: all %d are leased", timeout, limit)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// Release resets a leased slot (changes, untracked and ignored files, in
// submodules too) to its pool commit and makes it idle.
func (m *Manager) Release(ctx context.Context, l *Lease) error {
	return m.resetSlot(ctx, nil, l.Slot, l.contained)
}

// fromSlot turns an idle pool slot into the planned worktree env: it moves
// the slot to the env's path and checks out the branch (no hooks run).
// ok is false when no slot was idle or the slot could not be moved; the
// caller then makes the env afresh. The caller holds the lock.
func (m *Manager) fromSlot(ctx context.Context, lk *gitx.Locked, p *plan) (undo func(context.Context) error, ok bool, err error) {
	pid, start := holder()
	slot, err := m.Store.Lease(ctx, pid, start)
	if slot == nil || err != nil {
		return nil, false, err
	}
	madeDirs := missingDirs(p.path)
	if err := lk.MoveWorktree(ctx, slot.Path, p.path); err != nil {
		// A slot with submodules, or another file system: make afresh.
		return nil, false, m.Release(ctx, &Lease{Slot: slot})
	}
	// From here the slot is the env's worktree: every failure undoes it.
	undo = undoAll(unbranch(lk, p), func(ctx context.Context) error {
		err := lk.RemoveWorktree(ctx, p.path, true)
		for _, dir := range madeDirs {
			os.Remove(dir)
		}
		return err
	})
	if err := m.Store.DropSlot(ctx, slot.ID); err != nil {
		return undo, true, err
	}
	if p.branch == "" {
		err = m.Git.CheckoutDetached(ctx, p.path, p.start)
	} else {
		err = lk.SwitchNoHooks(ctx, p.path, p.branch, !p.branchExists, p.start)
	}
	return undo, true, err
}

// topUpPool starts `git apex pool warm` in the background, detached from
// this command's terminal and output, so the command returns at once.
func (m *Manager) topUpPool() {
	self, err := os.Executable()
	if err != nil {
		return
	}
	argv := []string{self, "pool", "warm"}
	if m.opts.PolicyFile != "" {
		argv = []string{self, "--policy", m.opts.PolicyFile, "pool", "warm"}
	}
	hostexec.Detach(argv, m.Git.MainRoot(), gitx.CleanEnv())
}

// KeepSlot takes a leased slot out of the pool and records it as a
// preserved env (a failed batch task kept for inspection), where it is.
func (m *Manager) KeepSlot(ctx context.Context, l *Lease, identity policy.Identity, reason string) (*state.Env, error) {
	commit := l.Slot.PoolCommit
	if wts, err := m.Git.Worktrees(ctx); err == nil {
		if wt, ok := gitx.FindWorktree(wts, l.Slot.Path); ok {
			commit = wt.Head
		}
	}
	env := &state.Env{Identity: identity.String(), Workflow: identity.Workflow, Name: identity.Name,
		ModeAsked: string(policy.Worktree), Mode: string(policy.Worktree), Path: l.Slot.Path, StartCommit: commit,
		Status: state.Preserved, Metadata: map[string]string{"preserved_reason": reason, "batch": "true"}}
	if err := m.Store.Create(ctx, env, "preserved", reason); err != nil {
		return nil, err
	}
	return env, m.Store.DropSlot(ctx, l.Slot.ID)
}

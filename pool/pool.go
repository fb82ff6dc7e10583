// Package pool keeps the warm pool: detached worktrees ("slots") ready
// under <git common dir>/apex/pool, leased to one process at a time,
// reclaimed when their holder dies, and handed to a start or a batch task.
// It owns slots and leases; a start takes a slot (Take) and isolation owns
// the env made from it, while a failed batch task's slot is recorded as a
// preserved env where it is (KeepSlot).
package pool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
)

// The warm pool keeps detached worktrees ("slots") ready under
// <git common dir>/apex/pool, at the base's commit. A slot is idle or
// leased to one process; a lease records the holder's PID and start time,
// so a slot whose holder died is reclaimed (reset and made idle) by the
// next acquire or by `pool status` (with what it left of a warm
// container: see reclaimDead). Slots are made and switched with the
// repository's hooks disabled: an env made from a slot has not run
// post-checkout.

// Pool is a repository's warm pool.
type Pool struct {
	r    *repo.Repo
	line *Line // orders this process's acquires; nil: none
}

// New is the pool of an opened repository.
func New(r *repo.Repo) *Pool { return &Pool{r: r} }

// InLine is the pool whose acquires wait in line (see Line) with the
// other acquires of the same line.
func (p *Pool) InLine(line *Line) *Pool { return &Pool{r: p.r, line: line} }

// Dir is where the slots live.
func (p *Pool) Dir() string { return filepath.Join(p.r.Git.ApexDir(), "pool") }

// holderAlive reports whether a lease's holder still runs.
func holderAlive(s *state.Slot) bool {
	return hostexec.Alive(s.HolderPID, s.HolderStart)
}

// Commit is the commit new and released slots sit at: the default
// base's tip.
func (p *Pool) Commit(ctx context.Context) (string, error) {
	pol, err := p.r.Policy()
	if err != nil {
		return "", err
	}
	base := pol.Worktree.Base
	if base == "" {
		worktrees, err := p.r.Git.Worktrees(ctx)
		if err != nil {
			return "", err
		}
		if base = worktrees[0].Branch; base == "" {
			return worktrees[0].Head, nil
		}
	}
	return p.r.Git.Commit(ctx, base)
}

// maxSlots is limit, or pol's [pool].max when that is set and lower.
func maxSlots(pol *policy.Policy, limit int) int {
	if m := pol.Pool.Max; m > 0 && limit > m {
		return m
	}
	return limit
}

// Warm makes slots until the pool has size of them (idle or leased),
// once it has removed idle ones above [pool].max (trim). It returns the
// slots. The pool's directory is closed to other users first
// (repo.Repo.Private), a full pool's too.
func (p *Pool) Warm(ctx context.Context, size int) ([]*state.Slot, error) {
	if hostpath.Exists(p.Dir()) {
		if _, err := p.r.Private(p.Dir()); err != nil {
			return nil, fmt.Errorf("cannot close %s to other users: %w", p.Dir(), err)
		}
	}
	if _, err := p.Reclaim(ctx, nil); err != nil {
		return nil, err
	}
	if err := (remover{p}).trim(ctx); err != nil {
		return nil, err
	}
	commit, err := p.Commit(ctx)
	if err != nil {
		return nil, err
	}
	for {
		slot, err := p.newSlot(ctx, commit, 0, 0, size)
		if err != nil {
			return nil, err
		}
		if slot == nil {
			return p.r.Store.Pool().All(ctx)
		}
	}
}

// newSlot makes one slot at commit, leased to pid (0: idle), unless the
// pool has limit slots already: then it returns nil. The count is taken
// under the repository lock, so that warmers running at once (every
// pooled start tops the pool up) never make more than limit between them.
func (p *Pool) newSlot(ctx context.Context, commit string, pid int, start int64, limit int) (*state.Slot, error) {
	lk, err := p.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if slots, err := p.r.Store.Pool().All(ctx); err != nil || len(slots) >= limit {
		return nil, err
	}
	if _, err := p.r.Private(p.Dir()); err != nil {
		return nil, fmt.Errorf("cannot close %s to other users: %w", p.Dir(), err)
	}
	dir, err := os.MkdirTemp(p.Dir(), "slot-")
	if err != nil {
		return nil, err
	}
	os.Remove(dir) // git worktree add makes it
	if err := lk.AddDetached(ctx, dir, commit); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot make a pool slot: %w", err)
	}
	slot, err := p.r.Store.Pool().Add(ctx, dir, commit, pid, start)
	if err != nil {
		lk.RemoveWorktree(context.WithoutCancel(ctx), dir)
	}
	return slot, err
}

// Reclaim resets the slots whose holder is gone and makes them idle. It
// returns how many it reclaimed. held is the repository lock when the
// caller holds it (the lock is not reentrant), else nil. Whether a dead
// holder ran a container in its slot is not recorded, so each is reset
// as a contained slot is: trusting nothing in it. A dead holder's lease
// first passes to this process (state.SlotTable.Takeover): of processes
// reclaiming at once (`pool status`, waiting batches, doctor), one
// reclaims each slot and the others pass over it, to wait for it or take
// another; and a reclaim cut short leaves the slot leased to a dead
// holder again, for the next.
func (p *Pool) Reclaim(ctx context.Context, held *gitx.Locked) (int, error) {
	slots, err := p.r.Store.Pool().All(ctx)
	if err != nil {
		return 0, err
	}
	pid, start := hostexec.Self()
	n := 0
	for _, s := range slots {
		if !s.Leased() || holderAlive(s) {
			continue
		}
		taken, err := p.r.Store.Pool().Takeover(ctx, s.ID, s.HolderPID, s.HolderStart, pid, start)
		if err != nil {
			return n, err
		}
		if taken == nil { // another process reclaims it
			continue
		}
		fctx, done := finishing(ctx) // once taken, reclaimed, even when interrupted
		p.reclaimDead(fctx, taken)
		err = (cleaner{p}).resetTask(fctx, held, taken, true)
		done()
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// resetSlot puts a slot back at its pool commit, clean, and idle. A slot
// whose directory is gone is forgotten, a broken one (no worktree any
// more) removed and forgotten (discard). A contained slot (a container
// worked in it; the caller has removed the container) is reset without
// entering its submodules, whose .git files the container could have
// pointed anywhere, then checked (see tainted): one whose pool commit has
// submodules, or that the check finds tainted, is removed instead.
func (p *Pool) resetSlot(ctx context.Context, held *gitx.Locked, s *state.Slot, contained bool) error {
	if hostpath.Exists(s.Path) {
		if why := p.broken(s); why != "" {
			p.discard(ctx, held, s, why)
			return nil
		}
		err := p.r.Git.ResetClean(ctx, s.Path, s.PoolCommit, contained)
		why := ""
		if err == nil && contained {
			owner, _ := p.r.HostUser()
			why = tainted(s.Path, owner)
		}
		switch {
		case err == nil && why == "":
			return p.r.Store.Pool().Free(ctx, s.ID, s.PoolCommit)
		case why != "":
			p.r.Warnf("pool slot %s is removed, not reused: a container left %s in it", s.Path, why)
		case !errors.Is(err, gitx.ErrSubmodules) && ctx.Err() != nil:
			return fmt.Errorf("cannot reset pool slot %s: %w", s.Path, err)
		case !errors.Is(err, gitx.ErrSubmodules): // the lease ends all the same
			p.r.Warnf("pool slot %s is removed, not reused: cannot reset it: %v", s.Path, err)
		}
	}
	return p.drop(ctx, held, s)
}

// drop removes a slot's worktree and forgets the slot. held is the
// repository lock when the caller holds it, else nil. A removal that git
// began and failed to finish (the slot is broken now) is finished
// without git, unless ctx ended: a removal cut short leaves the slot
// recorded, for the next command to find broken and forget.
func (p *Pool) drop(ctx context.Context, held *gitx.Locked, s *state.Slot) error {
	lk := held
	if lk == nil {
		var err error
		if lk, err = p.r.Lock(ctx); err != nil {
			return err
		}
		defer lk.Unlock()
	}
	err := lk.RemoveWorktree(ctx, s.Path)
	if err != nil && ctx.Err() == nil && hostpath.Exists(s.Path) && p.broken(s) != "" {
		err = lk.ForgetWorktree(s.Path)
	}
	if err != nil && hostpath.Exists(s.Path) {
		return err
	}
	return p.r.Store.Pool().Drop(ctx, s.ID)
}

// Status reclaims slots whose holder died, then lists the slots.
func (p *Pool) Status(ctx context.Context) ([]*state.Slot, int, error) {
	n, err := p.Reclaim(ctx, nil)
	if err != nil {
		return nil, n, err
	}
	slots, err := p.r.Store.Pool().All(ctx)
	return slots, n, err
}

// Drain removes the idle slots, those of the pools of the repository's
// cached clones (a batch task's `repo =`) too, and returns how many, and
// the trash entries it kept of them (see removeIdle). Each clone's pool
// is drained on its own: one that cannot be opened is named, with why
// (exit 1, unless a refusal below comes first), after the others are
// drained. With all, slots still leased by a running process are then
// refused (exit 3, naming them): their work is never deleted under
// them. An idle slot that a process works in (hostexec.Users: one left
// by a batch task, a shell) is kept too, and refused naming it, unless
// kill: then it is ended first (SIGTERM, then SIGKILL after
// [remove].kill_grace). An idle slot that holds an untracked nested
// repository (made there by hand), which the trash cannot keep, is kept
// too, and refused naming it (exit 3), unless force: then it is deleted
// with the slot, as `git apex remove --force --force` deletes one.
func (p *Pool) Drain(ctx context.Context, all, kill, force bool) (int, []trash.Entry, error) {
	n, kept, err := remover{p}.drainOwn(ctx, all, kill, force)
	clones, cerr := repo.OpenClones(ctx, p.r)
	err = errors.Join(err, cerr)
	var unopened []error
	for _, c := range clones {
		if c.Err != nil {
			unopened = append(unopened, exitcode.New(exitcode.Failure, "cannot drain the pool of the cached clone %s: %v (run what this says in the clone: `git -C %s apex ...`)", c.Dir, c.Err, c.Dir))
			continue
		}
		cn, ckept, cerr := remover{New(c.Repo)}.drainOwn(ctx, all, kill, force)
		c.Repo.Close()
		n, kept, err = n+cn, append(kept, ckept...), errors.Join(err, cerr)
	}
	return n, kept, errors.Join(append([]error{err}, unopened...)...)
}

// Lease is a slot held by this process.
type Lease struct {
	Slot      *state.Slot
	commit    string     // checked out in it
	contained bool       // a container worked in it
	warm      state.Warm // the warm container it took (AcquireWarm); zero: none
	box       string     // the identity its container and sandbox are named after
}

// Warm reports whether the lease took a warm container (AcquireWarm).
func (l *Lease) Warm() bool { return l.warm.Container != "" }

// Path is where the leased slot is.
func (l *Lease) Path() string { return l.Slot.Path }

// Acquire leases a slot at commit: an idle one, else a new one while the
// pool has fewer than limit slots (and than [pool].max), else it waits
// (until timeout) for one to be released. Switching the slot costs what
// differs from its commit. The acquires of a pool given a Line (InLine)
// get their slots in the order they began.
func (p *Pool) Acquire(ctx context.Context, commit string, limit int, timeout time.Duration) (*Lease, error) {
	pol, err := p.r.Policy()
	if err != nil {
		return nil, err
	}
	limit = maxSlots(pol, limit)
	pid, start := hostexec.Self()
	deadline := time.Now().Add(timeout)
	waiting := ""
	place := p.line.join()
	defer func() {
		place.leave()
		if waiting != "" {
			os.Remove(waiting)
		}
	}()
	refused := exitcode.New(exitcode.Refused, "no pool slot was free within %v: all %d are leased", timeout, limit)
	for wait := 10 * time.Millisecond; ; wait = min(wait*2, 200*time.Millisecond) {
		select {
		case <-place.turn:
		default: // tasks of this process that asked before wait for a slot: they get one first
			if waiting == "" {
				waiting = p.markWaiting(pid, start)
			}
			select {
			case <-place.turn:
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Until(deadline)):
				return nil, refused
			}
		}
		slot, err := p.r.Store.Pool().Lease(ctx, pid, start, false)
		if err != nil {
			return nil, err
		}
		if slot == nil {
			if reclaimed, err := p.Reclaim(ctx, nil); err != nil {
				return nil, err
			} else if reclaimed > 0 {
				continue
			}
			if slot, err = p.newSlot(ctx, commit, pid, start, limit); err != nil {
				return nil, err
			}
		}
		if slot == nil { // only slots with warm containers are idle: free one's slot
			if slot, err = p.r.Store.Pool().Lease(ctx, pid, start, true); err != nil {
				return nil, err
			}
			if slot != nil { // its container wrote there at will: reset and checked, then leased again
				p.dropWarm(ctx, slot, nil)
				fctx, done := finishing(ctx)
				err := p.resetSlot(fctx, nil, slot, true)
				done()
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		if slot != nil {
			place.leave() // the next in line tries while this slot is made ready
			ok, err := cleaner{p}.ready(ctx, slot, commit)
			switch {
			case err != nil:
				return nil, err
			case ctx.Err() != nil: // interrupted as it was made ready
				if ok {
					cleaner{p}.handBack(ctx, slot)
				}
				return nil, ctx.Err()
			case !ok: // removed, or left for another: another, in line again
				place = p.line.join()
				continue
			}
			return &Lease{Slot: slot, commit: commit}, nil
		}
		if time.Now().After(deadline) {
			return nil, refused
		}
		if waiting == "" {
			waiting = p.markWaiting(pid, start)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// handBack releases a slot an interrupted acquire made ready (see
// finishing); one it cannot release is left leased to this process, for
// the next reclaim once it has exited, and a warning says so.
func (c cleaner) handBack(ctx context.Context, s *state.Slot) {
	fctx, done := finishing(ctx)
	defer done()
	if err := c.Release(fctx, &Lease{Slot: s}); err != nil {
		c.r.Warnf("pool slot %s is left leased, to be reclaimed once this process has exited: the acquire was interrupted, and handing the slot back failed: %v", s.Path, err)
	}
}

// Release ends what the lease's task left running (its process group,
// what carries the slot's mark or works in the slot: see leftovers),
// resets the slot (changes, untracked and ignored files, in submodules
// too) to its pool commit and makes it idle; then, when the pool holds
// more slots than [pool].max, it removes idle ones down to it (trim).
func (p *Pool) Release(ctx context.Context, l *Lease) error {
	if l.warm != (state.Warm{}) { // the warm container it took: removed, unless its task's DropContainer did
		p.dropWarm(ctx, &state.Slot{ID: l.Slot.ID, Path: l.Slot.Path, Warm: l.warm}, nil)
	}
	if err := (cleaner{p}).resetTask(ctx, nil, l.Slot, l.contained); err != nil {
		return err
	}
	if err := (remover{p}).trim(ctx); err != nil { // the slot is idle again all the same
		p.r.Warnf("the pool holds more slots than [pool].max: %v", err)
	}
	return nil
}

// Take moves an idle slot without a warm container to path and takes the
// slot out of the pool: the worktree is then the caller's, at the slot's
// commit, detached. taken is the slot as it was (its path, its commit);
// nil when no such slot was idle or the slot could not be moved (a slot
// with submodules, another file system): the caller then makes its
// worktree afresh. When taken, the worktree is at path even if err is
// not nil. The caller holds the lock. A warm container's slot is never
// taken: the container writes there at will (see "Warm containers"),
// and every other idle slot was reset, and checked when a container had
// worked there, once no container could write there any more. What a
// task left running there is ended first, and a slot found changed
// since its release is removed, not taken (see takeable).
func (p *Pool) Take(ctx context.Context, lk *gitx.Locked, path string) (taken *state.Slot, err error) {
	pid, start := hostexec.Self()
	for {
		slot, err := p.r.Store.Pool().Lease(ctx, pid, start, false)
		if slot == nil || err != nil {
			return nil, err
		}
		if ok, err := (cleaner{p}).takeable(ctx, lk, slot); err != nil || !ok {
			if err != nil {
				return nil, err
			}
			continue // removed: another
		}
		if err := lk.MoveWorktree(ctx, slot.Path, path); err != nil {
			return nil, cleaner{p}.resetTask(ctx, lk, slot, false) // not Release: its trim takes the lock
		}
		return slot, p.r.Store.Pool().Drop(ctx, slot.ID)
	}
}

// TopUp starts `git apex pool warm` in the background, detached from
// this command's terminal and output, so the command returns at once.
func (p *Pool) TopUp() {
	self, err := os.Executable()
	if err != nil {
		return
	}
	argv := []string{self, "pool", "warm"}
	if file := p.r.PolicyFile(); file != "" {
		argv = []string{self, "--policy", file, "pool", "warm"}
	}
	hostexec.Detach(argv, p.r.Git.MainRoot(), gitx.CleanEnv())
}

// KeepSlot takes a leased slot out of the pool and records it as a
// preserved env (a failed batch task kept for inspection), where it is.
// The env is named identity, or, while that has a live env (a kept task
// of an earlier batch with the same id), identity with -2, -3, ... added
// to its name: env.Identity says which.
func (p *Pool) KeepSlot(ctx context.Context, l *Lease, identity policy.Identity, reason string) (*state.Env, error) {
	return p.keepSlot(ctx, l.Slot, identity, reason, map[string]string{"batch": "true"})
}

// keepSlot is KeepSlot of the slot s, leased by this process, with
// metadata added to the env's.
func (p *Pool) keepSlot(ctx context.Context, s *state.Slot, identity policy.Identity, reason string, metadata map[string]string) (*state.Env, error) {
	commit := s.PoolCommit
	if wts, err := p.r.Git.Worktrees(ctx); err == nil {
		if wt, ok := gitx.FindWorktree(wts, s.Path); ok {
			commit = wt.Head
		}
	}
	for n := 1; ; n++ {
		id := identity
		if n > 1 {
			id.Name = fmt.Sprintf("%s-%d", identity.Name, n)
		}
		env := &state.Env{Identity: id.String(), Workflow: id.Workflow, Name: id.Name,
			ModeAsked: string(policy.Worktree), Mode: string(policy.Worktree), Path: s.Path, StartCommit: commit,
			Status: state.Preserved, Metadata: map[string]string{"preserved_reason": reason}}
		maps.Copy(env.Metadata, metadata)
		err := p.r.Store.Create(ctx, env, "preserved", reason)
		switch {
		case errors.Is(err, state.ErrIdentityTaken) && n < maxKeptNames:
			continue
		case err != nil:
			return nil, err
		}
		return env, p.r.Store.Pool().Drop(ctx, s.ID)
	}
}

// maxKeptNames is how many names KeepSlot tries for one task's env.
const maxKeptNames = 100

// ReleaseToTrash releases a leased slot whose task's work could not be
// kept as an env (KeepSlot failed): what the task changed there is kept
// in the trash first, as identity's work, then the slot is reset and
// idle, as Release leaves it. kept is nil when the task changed nothing;
// when the work cannot be kept, the slot is left as it is, leased, for
// the next acquire or doctor to clean (keeping it then).
func (p *Pool) ReleaseToTrash(ctx context.Context, l *Lease, identity policy.Identity) (kept *trash.Entry, err error) {
	lk, err := p.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	what := trash.Entry{Identity: identity.String(), Mode: string(policy.Worktree), Path: l.Slot.Path}
	// The commits the task made on the slot's detached HEAD go with it.
	kept, err = trash.Record(ctx, lk, what, trash.Options{Contained: l.contained, Made: l.commit}, p.r.Store.Now())
	lk.Unlock()
	if err != nil {
		return nil, err
	}
	return kept, p.Release(ctx, l)
}

// BaseCommit resolves a task's base: a commit-ish, or "" for the pool's
// commit (the default base's tip).
func (p *Pool) BaseCommit(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		return p.Commit(ctx)
	}
	return p.r.Git.Commit(ctx, rev)
}

package pool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
)

// A slot is clean when a task gets it, by construction:
//
//   - a lease records the process group its task runs in (RecordTask);
//   - before a slot is reset, what its task left running is ended and
//     waited for: the members of that group; and, when the holder died,
//     any process with its working directory, its root or an open file in
//     the slot (a child that started a session of its own); a slot where
//     some still run after that is removed;
//   - a dead holder's slot is reclaimed by one process: the lease passes
//     to it in one write transaction of the state database, whose check
//     that the dead holder still holds it is inside it (see Reclaim);
//   - an acquire checks that the slot is clean at its commit (git status,
//     ignored files too), keeps what it finds changed in the trash, resets
//     it, and removes it if it still is not clean (see ready); a removed
//     slot is never handed out.
//
// cleaner does the ending, checking and resetting.

// RecordTask records, in the lease, the process group its task runs in
// (as hostexec.Command.Started tells it), so that what the task leaves
// running is ended before the slot is reset, even once this process is
// gone.
func (p *Pool) RecordTask(ctx context.Context, l *Lease, g hostexec.Group) error {
	l.Slot.TaskGroup, l.Slot.TaskStart = g.ID, g.Start
	return p.r.Store.Pool().SetTask(ctx, l.Slot.ID, g.ID, g.Start)
}

// cleaner makes a pool's slots clean: it ends what tasks left running
// in them, and checks and resets them (see above).
type cleaner struct{ *Pool }

// leftovers are the processes of a slot's task that still run: the
// members of the group its lease records, and with users any other
// process that uses the slot (hostexec.Users: a child that started a
// session of its own). That second pass reads every process's open
// files (tens of milliseconds on a busy machine), so a release by a
// live holder, whose task's group ended under its eyes, makes only the
// first: the second is for a dead holder's slot, and for one an acquire
// finds changed.
func leftovers(s *state.Slot, users bool) []hostexec.Process {
	procs := hostexec.Group{ID: s.TaskGroup, Start: s.TaskStart}.Members()
	if !users {
		return procs
	}
	seen := map[int]bool{}
	for _, pr := range procs {
		seen[pr.PID] = true
	}
	for _, pr := range hostexec.UsersOf(s.Path) {
		if !seen[pr.PID] {
			procs = append(procs, pr)
		}
	}
	return procs
}

// endTask ends what a slot's task left running (leftovers: SIGTERM, then
// SIGKILL after [remove].kill_grace), says so, and checks that nothing
// of it survived: a process that forked as it was ended is ended in a
// second round. It fails naming what still runs.
func (c cleaner) endTask(s *state.Slot, users bool) error {
	for range 3 {
		procs := leftovers(s, users)
		if len(procs) == 0 {
			return nil
		}
		err := hostexec.End(procs, repo.KillGrace(c.r))
		c.r.Notef("pool slot %s: ended %s, left running by its task", s.Path, hostexec.Describe(procs))
		if err != nil {
			return err
		}
	}
	if procs := leftovers(s, users); len(procs) > 0 {
		return fmt.Errorf("%s still running there", hostexec.Describe(procs))
	}
	return nil
}

// resetTask is resetSlot once what the slot's task left running is ended
// (endTask, with users as for leftovers); a slot where some of it still
// runs is removed instead.
func (c cleaner) resetTask(ctx context.Context, held *gitx.Locked, s *state.Slot, contained, users bool) error {
	if err := c.endTask(s, users); err != nil {
		c.r.Warnf("pool slot %s is removed, not reused: %v", s.Path, err)
		return c.drop(ctx, held, s)
	}
	return c.resetSlot(ctx, held, s, contained)
}

// Orphan is a slot whose holder died while processes of its task still
// run, for doctor.
type Orphan struct {
	Slot  *state.Slot
	Procs []hostexec.Process
	pool  *Pool
}

// Orphans are the slots whose holder died with processes of its task
// still running in them (a batch killed under its tasks), before any
// reclaim ends them.
func (p *Pool) Orphans(ctx context.Context) ([]Orphan, error) {
	slots, err := p.r.Store.Pool().All(ctx)
	if err != nil {
		return nil, err
	}
	var found []Orphan
	for _, s := range slots {
		if !s.Leased() || holderAlive(s) {
			continue
		}
		if procs := leftovers(s, true); len(procs) > 0 {
			found = append(found, Orphan{Slot: s, Procs: procs, pool: p})
		}
	}
	return found, nil
}

// End ends the processes of the orphan's task, for doctor --fix; the
// slot is then reclaimed as any dead holder's is.
func (o Orphan) End() error { return cleaner{o.pool}.endTask(o.Slot, true) }

// ready checks that a slot just leased is clean at its commit (nothing
// changed, untracked or ignored: what git status finds), then checks out
// commit there. A slot that is not clean (changed by hand, or by a
// process that outlived its task) has what is changed kept in the trash
// (keepChanged), what still runs there ended, and is reset, as a
// contained slot is, to commit, and checked again. ready reports false
// when the slot cannot be made clean: it is then removed from the pool,
// never handed out, and the caller takes another. An interrupt (ctx
// cancelled) does not cut this short, up to cleanupGrace after it (see
// finishing); when that passes first, the slot is made idle again as it
// is, for the next acquire to clean, and ready reports false.
func (c cleaner) ready(ctx context.Context, s *state.Slot, commit string) (bool, error) {
	fctx, done := finishing(ctx)
	defer done()
	dirt, err := c.dirt(fctx, s)
	if err == nil && dirt == "" {
		if err = c.r.Git.CheckoutDetached(fctx, s.Path, commit); err == nil {
			return true, nil
		}
	}
	why := fmt.Sprint(err)
	if err == nil {
		why = "git status found " + dirt
	}
	kept, err := c.cleanUp(fctx, s, commit)
	if kept != nil {
		why += fmt.Sprintf("; kept in the trash, `git apex restore %s` gets it back", kept.Identity)
	}
	switch {
	case err == nil:
		c.r.Warnf("pool slot %s was not clean (%s): it was reset", s.Path, why)
		return true, nil
	case fctx.Err() != nil:
		c.r.Warnf("pool slot %s was not clean (%s), and its clean-up was cut short %v after the interrupt: it is idle again as it is, for the next acquire to clean", s.Path, why, cleanupGrace)
		return false, c.r.Store.Pool().Free(context.WithoutCancel(ctx), s.ID, s.PoolCommit)
	}
	c.r.Warnf("pool slot %s is removed, not leased: it was not clean (%s), and cannot be made so: %v", s.Path, why, err)
	return false, c.drop(fctx, nil, s)
}

// cleanupGrace is how long clean-up that has begun (making a leased
// slot ready, reclaiming a dead holder's slot) goes on after an
// interrupt, so that it does not stop half-way, leaving a slot half
// reset and leased to a process about to exit.
const cleanupGrace = time.Minute

// finishing is the context for clean-up begun under ctx, which goes on
// for up to cleanupGrace after ctx is cancelled (hostexec.Finishing).
func finishing(ctx context.Context) (context.Context, func()) {
	return hostexec.Finishing(ctx, cleanupGrace)
}

// dirt says what git status finds in a slot, ignored files included
// ("1 modified, 1 untracked, 1 ignored"); "" when it is clean. The slot
// is trusted as little as a container's (gitx.StatusOptions.Contained).
func (c cleaner) dirt(ctx context.Context, s *state.Slot) (string, error) {
	st, err := c.r.Git.Status(ctx, s.Path, gitx.StatusOptions{Contained: true, Ignored: true})
	switch {
	case err != nil:
		return "", err
	case st.Dirty() && st.Ignored > 0:
		return fmt.Sprintf("%s, %d ignored", st.Changes, st.Ignored), nil
	case st.Ignored > 0:
		return fmt.Sprintf("%d ignored", st.Ignored), nil
	case st.Dirty():
		return st.Changes.String(), nil
	}
	return "", nil
}

// cleanUp is ready's reset of a slot that is not clean, and the check
// after it; it returns the trash entry of what it kept.
func (c cleaner) cleanUp(ctx context.Context, s *state.Slot, commit string) (*trash.Entry, error) {
	if err := c.endTask(s, true); err != nil {
		return nil, err
	}
	lk, err := c.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	kept, err := c.keepChanged(ctx, lk, s, true, nil)
	lk.Unlock()
	if err != nil {
		return nil, err
	}
	if err := c.r.Git.ResetClean(ctx, s.Path, commit, true); err != nil {
		return kept, err
	}
	if dirt, err := c.dirt(ctx, s); err != nil || dirt != "" {
		return kept, errors.Join(err, fmt.Errorf("git status still finds %s", dirt))
	}
	return kept, nil
}

// keepChanged keeps what was changed in an idle slot (by hand, or by a
// process that outlived its task) in the trash, as the work of the
// identity task-<slot>, which `git apex restore` makes into an env at
// the slot's commit; nil when nothing was. contained and keepIgnored are
// as for trash.Record.
func (c cleaner) keepChanged(ctx context.Context, lk *gitx.Locked, s *state.Slot, contained bool, keepIgnored []string) (*trash.Entry, error) {
	what := trash.Entry{Identity: "task-" + filepath.Base(s.Path), Mode: string(policy.Worktree), Path: s.Path}
	return trash.Record(ctx, lk, what, contained, keepIgnored, c.r.Store.Now())
}

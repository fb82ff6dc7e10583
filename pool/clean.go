package pool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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
//   - every process of a batch task carries, in its environment, the mark
//     of its slot (MarkVar=<the slot's path>, Lease.Mark); the processes
//     it starts inherit it, in a session of their own (setsid) or after a
//     double fork too, and whatever directory they work in;
//   - a lease records the process group its task runs in (RecordTask);
//   - a slot's leftovers are found in one pass over the processes
//     (hostexec.Find): the members of that group, the processes that
//     carry the slot's mark, and those with their working directory,
//     their root or an open file in the slot (hostexec.Users: one that
//     cleared its environment but still works there). They are frozen
//     (SIGSTOP, pass after pass, so that none forks a successor a pass
//     has not seen), then ended and waited for (hostexec.EndAll) at
//     every release (a live holder's too), when a dead
//     holder's slot is reclaimed, and before an idle slot is leased
//     (ready) or taken by `start` (Take); a slot where some still run
//     after that is removed;
//   - a dead holder's slot is reclaimed by one process: the lease passes
//     to it in one write transaction of the state database, whose check
//     that the dead holder still holds it is inside it (see Reclaim);
//   - a slot's reset clears its own git state too (gitx.ResetClean):
//     what a task leaves in its worktree's git directory (an operation in
//     progress, per-worktree refs, a sparse checkout, index flags), which
//     git reset and git clean keep and git status does not show;
//   - an acquire, and Take, check that an idle slot is clean at its
//     commit (git status, ignored files too, and that git state). One that is not was changed
//     after its release: what is changed is kept in the trash. When the
//     pass found leftovers there (which it ends), they explain it, and
//     an acquire resets the slot and checks it again (see ready); when
//     it found none, something that knows the slot's path wrote there
//     by it, and may again: the slot is removed, and the next one made
//     has a new random name (os.MkdirTemp). A removed slot is never
//     handed out.
//
// Out of reach: a process that clears its environment (or starts from
// one that did) and touches the slot only by its path, never holding
// its working directory or a file open there when a pass looks, and
// writes into a slot that is then never checked again before a task
// runs there: none is, since every lease and take checks. What it
// writes into a slot while a task works there is that task's to see.
//
// The mark is the slot's path rather than a token of one lease: an
// idle slot has no holder to derive one from, and whatever carries it
// is a leftover of some task of that slot, which must end before the
// slot is handed on. Nothing of the state database changes for it.
//
// cleaner does the ending, checking and resetting.

// MarkVar is the environment variable that marks a batch task's
// processes with their slot (see Lease.Mark).
const MarkVar = "GIT_APEX_POOL_SLOT"

// mark is the setting that marks the processes of a task of slot s.
func mark(s *state.Slot) string { return MarkVar + "=" + s.Path }

// Mark is the environment setting (NAME=value) every process of the
// lease's task must carry, so that what it leaves running is found
// wherever it works (see above). It replaces any MarkVar the caller's
// environment holds (a batch run by a task).
func (l *Lease) Mark() string { return mark(l.Slot) }

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

// leftovers are the processes of a slot's tasks that still run: the
// members of the group its lease records, those carrying its mark, and
// any other process that uses the slot (hostexec.Users), in one pass.
func leftovers(s *state.Slot) []hostexec.Process {
	trace := hostexec.Trace{Dir: s.Path, Mark: mark(s), Group: hostexec.Group{ID: s.TaskGroup, Start: s.TaskStart}}
	return hostexec.Find([]hostexec.Trace{trace})[0]
}

// endTask ends what a slot's tasks left running (leftovers), and what
// that starts as it is ended: it is stopped first, pass after pass,
// until none runs (hostexec.EndAll), then sent SIGTERM, and SIGKILL
// after [remove].kill_grace; so that a process forking anew each
// generation does not escape. It says what it ended, reports whether it
// found any, and fails naming what still runs.
func (c cleaner) endTask(s *state.Slot) (bool, error) {
	procs, err := hostexec.EndAll(func() []hostexec.Process { return leftovers(s) }, repo.KillGrace(c.r))
	if len(procs) > 0 {
		c.r.Notef("pool slot %s: ended %s, left running by its task", s.Path, hostexec.Describe(procs))
	}
	return len(procs) > 0, err
}

// resetTask is resetSlot once what the slot's tasks left running is
// ended (endTask); a slot where some of it still runs is removed
// instead.
func (c cleaner) resetTask(ctx context.Context, held *gitx.Locked, s *state.Slot, contained bool) error {
	if _, err := c.endTask(s); err != nil {
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
// reclaim ends them: the slots of this repository's pool, and of its
// cached clones' (repo.OpenClones: a task with `repo =` works in one),
// as Drain reaches them. A clone that cannot be opened is passed over
// with a warning. done closes the clones opened, once the orphans are
// ended or not.
func (p *Pool) Orphans(ctx context.Context) (found []Orphan, done func(), err error) {
	if found, err = p.orphans(ctx); err != nil {
		return nil, func() {}, err
	}
	clones, err := repo.OpenClones(ctx, p.r)
	var opened []*repo.Repo
	done = func() {
		for _, r := range opened {
			r.Close()
		}
	}
	for _, c := range clones {
		if c.Err != nil {
			p.r.Warnf("cannot look for what tasks left running in the pool of the cached clone %s: %v", c.Dir, c.Err)
			continue
		}
		opened = append(opened, c.Repo)
		more, cerr := New(c.Repo).orphans(ctx)
		found, err = append(found, more...), errors.Join(err, cerr)
	}
	return found, done, err
}

// orphans are Orphans of this pool alone.
func (p *Pool) orphans(ctx context.Context) ([]Orphan, error) {
	slots, err := p.r.Store.Pool().All(ctx)
	if err != nil {
		return nil, err
	}
	var found []Orphan
	for _, s := range slots {
		if !s.Leased() || holderAlive(s) {
			continue
		}
		if procs := leftovers(s); len(procs) > 0 {
			found = append(found, Orphan{Slot: s, Procs: procs, pool: p})
		}
	}
	return found, nil
}

// End ends the processes of the orphan's task, for doctor --fix; the
// slot is then reclaimed as any dead holder's is.
func (o Orphan) End() error {
	_, err := cleaner{o.pool}.endTask(o.Slot)
	return err
}

// ready ends what earlier tasks of a slot just leased left running there
// (endTask: a pass over the processes, a few milliseconds), so that one
// that waits quietly (asleep) before it writes does not write into the
// next task's work; it removes the slot when some of it cannot be ended.
// It then checks that the slot is clean at its commit (nothing
// changed, untracked or ignored: what git status finds), then checks out
// commit there. A slot that is not clean (changed by hand, or by a
// process that outlived its task) has what is changed kept in the trash
// (keepChanged) and what still runs there ended; when something did, it
// is reset, as a contained slot is, to commit, and checked again; when
// nothing did, it is removed (see cleanUp). ready reports false
// when the slot cannot be made clean: it is then removed from the pool,
// never handed out, and the caller takes another. An interrupt (ctx
// cancelled) does not cut this short, up to cleanupGrace after it (see
// finishing); when that passes first, the slot is made idle again as it
// is, for the next acquire to clean, and ready reports false; when its
// removal is what was cut short, it is left leased to this process, for
// a reclaim once it has exited. A broken slot (no worktree any more) is
// removed and forgotten at once (discard), and ready reports false.
func (c cleaner) ready(ctx context.Context, s *state.Slot, commit string) (bool, error) {
	fctx, done := finishing(ctx)
	defer done()
	if why := c.broken(s); why != "" {
		c.discard(fctx, nil, s, why)
		return false, nil
	}
	found, err := c.endTask(s)
	if err != nil {
		if derr := c.drop(fctx, nil, s); derr != nil {
			return false, fmt.Errorf("pool slot %s cannot be leased (%v), nor removed: %w", s.Path, err, derr)
		}
		c.r.Warnf("pool slot %s is removed, not leased: %v", s.Path, err)
		return false, nil
	}
	dirt, err := c.dirt(fctx, s, s.PoolCommit)
	if err == nil && dirt == "" {
		if err = c.r.Git.CheckoutDetached(fctx, s.Path, commit); err == nil {
			return true, nil
		}
	}
	if nested, ok := c.nestedUnlocked(fctx, s); ok && len(nested) > 0 {
		return false, c.setAside(fctx, s, nested) // never deleted with what the trash cannot keep
	}
	why := fmt.Sprint(err)
	if err == nil {
		why = "git status found " + dirt
	}
	kept, err := c.cleanUp(fctx, s, commit, dirt != "", found)
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
	derr := c.drop(fctx, nil, s)
	switch {
	case derr == nil:
		c.r.Warnf("pool slot %s is removed, not leased: it was not clean (%s), and cannot be made so: %v", s.Path, why, err)
		return false, nil
	case fctx.Err() != nil:
		c.r.Warnf("pool slot %s is not leased: it was not clean (%s), and cannot be made so (%v); its removal was cut short %v after the interrupt: it is left leased to this process, for the next command to reclaim once it has exited", s.Path, why, err, cleanupGrace)
		return false, nil
	}
	return false, fmt.Errorf("pool slot %s was not clean (%s), and cannot be made so (%v), nor removed: %w", s.Path, why, err, derr)
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
// ("1 modified, 1 untracked, 1 ignored"), and the git state of the slot's
// own git directory a status does not show (gitx.WorktreeState: an
// operation in progress, per-worktree refs, a sparse checkout,
// skip-worktree or assume-unchanged entries), or a HEAD that is not at
// the commit at, where the slot should be (a commit made there by hand);
// "" when it is clean at at. The slot is trusted as little as a
// container's (gitx.StatusOptions.Contained).
func (c cleaner) dirt(ctx context.Context, s *state.Slot, at string) (string, error) {
	st, err := c.r.Git.Status(ctx, s.Path, gitx.StatusOptions{Contained: true, Ignored: true})
	switch {
	case err != nil:
		return "", err
	case st.Head != "" && st.Head != at:
		return fmt.Sprintf("HEAD at %.12s, not at the slot's commit %.12s", st.Head, at), nil
	}
	var found []string
	switch {
	case st.Dirty() && st.Ignored > 0:
		found = append(found, fmt.Sprintf("%s, %d ignored", st.Changes, st.Ignored))
	case st.Ignored > 0:
		found = append(found, fmt.Sprintf("%d ignored", st.Ignored))
	case st.Dirty():
		found = append(found, st.Changes.String())
	}
	gitState, err := c.r.Git.WorktreeState(ctx, s.Path)
	if err != nil {
		return "", err
	}
	if gitState != "" {
		found = append(found, gitState)
	}
	return strings.Join(found, "; "), nil
}

// cleanUp is ready's reset of a slot that is not clean, and the check
// after it; it returns the trash entry of what it kept. ended tells
// whether ready ended leftovers there already. A slot changed
// since its release where no leftover of a task is found (see above) is
// not reset: cleanUp fails with errByPath, and ready removes it.
func (c cleaner) cleanUp(ctx context.Context, s *state.Slot, commit string, changed, ended bool) (*trash.Entry, error) {
	found, err := c.endTask(s)
	if err != nil {
		return nil, err
	}
	found = found || ended
	lk, err := c.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	kept, err := c.keepChanged(ctx, lk, s, true, nil)
	lk.Unlock()
	if err != nil {
		return nil, err
	}
	if changed && !found {
		return kept, errByPath
	}
	if err := c.r.Git.ResetClean(ctx, s.Path, commit, true); err != nil {
		return kept, err
	}
	if dirt, err := c.dirt(ctx, s, commit); err != nil || dirt != "" {
		return kept, errors.Join(err, fmt.Errorf("git status still finds %s", dirt))
	}
	return kept, nil
}

// nestedUnlocked is nestedIn of the idle slot s under the repository
// lock, which it takes; ok is false when they cannot be listed.
func (c cleaner) nestedUnlocked(ctx context.Context, s *state.Slot) (nested []string, ok bool) {
	lk, err := c.r.Lock(ctx)
	if err != nil {
		return nil, false
	}
	defer lk.Unlock()
	nested, err = c.nestedIn(ctx, lk, s, false)
	return nested, err == nil
}

// errByPath is why a slot changed since its release, with no leftover
// of a task there, is removed rather than reset.
var errByPath = errors.New("no process of a task is left there to have changed it: something wrote there by its path, and could again")

// takeable readies an idle slot for Take: it ends what a task left
// running there, and checks that the slot is clean at its commit. A
// slot that is not (or that cannot be checked, or where something still
// runs) has what is changed kept in the trash, and is removed: it
// reports false, and Take takes another; so does a broken one
// (discard). lk is the repository lock, which Take's caller holds.
func (c cleaner) takeable(ctx context.Context, lk *gitx.Locked, s *state.Slot) (bool, error) {
	if why := c.broken(s); why != "" {
		c.discard(ctx, lk, s, why)
		return false, nil
	}
	_, err := c.endTask(s)
	dirt := ""
	if err == nil {
		dirt, err = c.dirt(ctx, s, s.PoolCommit)
	}
	if err == nil && dirt == "" {
		return true, nil
	}
	if nested, nerr := c.nestedIn(ctx, lk, s, false); nerr == nil && len(nested) > 0 {
		return false, c.setAside(ctx, s, nested) // never deleted with what the trash cannot keep
	}
	why := fmt.Sprint(err)
	if err == nil {
		why = "git status found " + dirt + " since its release"
	}
	kept, err := c.keepChanged(ctx, lk, s, true, nil)
	if err != nil { // left leased: reclaimed once this process is gone
		return false, fmt.Errorf("pool slot %s was not clean (%s), and what is changed there cannot be kept: %w", s.Path, why, err)
	}
	if kept != nil {
		why += fmt.Sprintf("; kept in the trash, `git apex restore %s` gets it back", kept.Identity)
	}
	c.r.Warnf("pool slot %s is removed, not taken: it was not clean (%s)", s.Path, why)
	return false, c.drop(ctx, lk, s)
}

// keepChanged keeps what was changed in an idle slot (by hand, or by a
// process that outlived its task) in the trash, commits made on its
// detached HEAD since the slot's commit that nothing else holds
// included, as the work of the identity task-<slot>, which `git apex
// restore` makes into an env at the slot's HEAD; nil when nothing was.
// contained and keepIgnored are as for trash.Options.
func (c cleaner) keepChanged(ctx context.Context, lk *gitx.Locked, s *state.Slot, contained bool, keepIgnored []string) (*trash.Entry, error) {
	what := trash.Entry{Identity: "task-" + filepath.Base(s.Path), Mode: string(policy.Worktree), Path: s.Path}
	opts := trash.Options{Contained: contained, KeepIgnored: keepIgnored, Made: s.PoolCommit}
	return trash.Record(ctx, lk, what, opts, c.r.Store.Now())
}

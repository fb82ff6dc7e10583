package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// remover removes idle slots: all of them (`pool drain`), or those
// above [pool].max (trim), keeping what was changed in them by hand in
// the trash first (removeIdle).
type remover struct{ *Pool }

// drainOwn is Drain of this repository's own pool.
func (p remover) drainOwn(ctx context.Context, all, kill, force bool) (int, []trash.Entry, error) {
	if _, err := p.Reclaim(ctx, nil); err != nil {
		return 0, nil, err
	}
	slots, err := p.r.Store.Pool().All(ctx)
	if err != nil {
		return 0, nil, err
	}
	lk, err := p.r.Lock(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer lk.Unlock()
	var idle, busy, unkept []string
	for _, s := range slots {
		if !s.Leased() {
			idle = append(idle, s.Path)
		}
	}
	users := hostexec.Users(idle)
	n := 0
	var kept []trash.Entry
	for _, s := range slots {
		if s.Leased() {
			continue
		}
		warm := s.Warm != state.Warm{}
		if nested, err := nestedIn(ctx, lk, s, warm); err != nil {
			return n, kept, fmt.Errorf("cannot drain pool slot %s: %w", s.Path, err)
		} else if len(nested) > 0 && !force {
			unkept = append(unkept, nestedWords(nested)+" in "+s.Path)
			continue
		}
		if procs := users[s.Path]; len(procs) > 0 && !kill {
			busy = append(busy, s.Path+" by "+hostexec.Describe(procs))
			continue
		} else if len(procs) > 0 {
			if err := hostexec.End(procs, repo.KillGrace(p.r)); err != nil {
				return n, kept, exitcode.New(exitcode.Refused, "cannot drain pool slot %s: %v", s.Path, err)
			}
			p.r.Notef("pool slot %s: ended %s", s.Path, hostexec.Describe(procs))
		}
		p.dropWarm(ctx, s, nil)
		entry, err := p.removeIdle(ctx, lk, s, warm)
		if entry != nil {
			kept = append(kept, *entry)
		}
		if err != nil {
			return n, kept, err
		}
		if err := p.r.Store.Pool().Drop(ctx, s.ID); err != nil {
			return n, kept, err
		}
		n++
	}
	if len(unkept) > 0 {
		return n, kept, exitcode.New(exitcode.Refused, "cannot drain %s: it holds what the trash cannot keep: %s; commit and push them, or move them out, or run `git apex pool drain --force` to delete them too",
			words.Count(len(unkept), "slot"), strings.Join(unkept, "; "))
	}
	if len(busy) > 0 {
		return n, kept, exitcode.New(exitcode.Refused, "cannot drain %s in use: %s; stop them, or run `git apex pool drain --kill`",
			words.Count(len(busy), "slot"), strings.Join(busy, "; "))
	}
	if all {
		return n, kept, stillLeased(slots)
	}
	return n, kept, nil
}

// removeIdle removes an idle slot's worktree. A release leaves it clean,
// so what git finds changed in it was changed by hand: that is kept in
// the trash first (keepChanged). A broken one is forgotten (forget). A slot a warm container was made for
// holds nothing of the user's, and goes as it is.
func (p remover) removeIdle(ctx context.Context, lk *gitx.Locked, s *state.Slot, warm bool) (*trash.Entry, error) {
	if why := p.broken(s); why != "" {
		return p.forget(ctx, lk, s, why)
	}
	var kept *trash.Entry
	if !warm && hostpath.Exists(s.Path) {
		var err error
		if kept, err = (cleaner{p.Pool}).keepChanged(ctx, lk, s, false, repo.KeepIgnored(p.r)); err != nil {
			return nil, fmt.Errorf("cannot drain pool slot %s: %w", s.Path, err)
		}
	}
	if err := lk.RemoveWorktree(ctx, s.Path); err != nil && hostpath.Exists(s.Path) {
		return kept, err
	}
	return kept, nil
}

// trim brings a pool that holds more slots than [pool].max (the cap was
// lowered under it) down to max, for `pool warm` and each release: it
// removes idle slots, those without a warm container first, newest
// first. What was changed in one by hand is kept in the trash first, as
// `pool drain` keeps it (removeIdle); an idle slot a process works in is
// passed over, and a leased one is never removed: its release trims
// again. It says what it removed and kept.
func (p remover) trim(ctx context.Context) error {
	pol, err := p.r.Policy()
	if err != nil || pol.Pool.Max == 0 {
		return err
	}
	if slots, err := p.r.Store.Pool().All(ctx); err != nil || len(slots) <= pol.Pool.Max {
		return err
	}
	lk, err := p.r.Lock(ctx) // counted and removed under it, as newSlot counts
	if err != nil {
		return err
	}
	defer lk.Unlock()
	slots, err := p.r.Store.Pool().All(ctx)
	if err != nil {
		return err
	}
	var plain, warm []*state.Slot
	var paths []string
	for _, s := range slices.Backward(slots) {
		switch {
		case s.Leased():
			continue
		case s.Warm.Container != "":
			warm = append(warm, s)
		default:
			plain = append(plain, s)
		}
		paths = append(paths, s.Path)
	}
	users := hostexec.Users(paths)
	pid, start := hostexec.Self()
	removed := 0
	for _, s := range append(plain, warm...) {
		if len(slots)-removed <= pol.Pool.Max {
			break
		}
		if len(users[s.Path]) > 0 {
			continue
		}
		taken, err := p.r.Store.Pool().LeaseSlot(ctx, pid, start, s.ID) // no acquire takes it meanwhile
		if err != nil {
			return err
		}
		if taken == nil {
			continue
		}
		warm := taken.Warm != state.Warm{}
		if nested, err := nestedIn(ctx, lk, taken, warm); err != nil || len(nested) > 0 {
			// Kept in the pool: never deleted with what the trash cannot keep.
			err = errors.Join(err, p.r.Store.Pool().Free(ctx, taken.ID, taken.PoolCommit))
			if err != nil {
				return err
			}
			p.r.Notef("pool slot %s is kept above [pool].max = %d: it holds %s, which the trash cannot keep", taken.Path, pol.Pool.Max, nestedWords(nested))
			continue
		}
		p.dropWarm(ctx, taken, nil)
		kept, err := p.removeIdle(ctx, lk, taken, warm)
		if kept != nil {
			p.r.Notef("pool slot %s had %s changed by hand: kept in the trash, `git apex restore %s` gets it back",
				taken.Path, words.Count(kept.Files, "file"), kept.Identity)
		}
		if err != nil {
			return fmt.Errorf("cannot remove pool slot %s above [pool].max = %d: %w", taken.Path, pol.Pool.Max, err)
		}
		if err := p.r.Store.Pool().Drop(ctx, taken.ID); err != nil {
			return err
		}
		removed++
	}
	if removed > 0 {
		p.r.Notef("removed %s above [pool].max = %d", words.Count(removed, "idle slot"), pol.Pool.Max)
	}
	return nil
}

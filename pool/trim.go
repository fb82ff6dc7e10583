package pool

import (
	"context"
	"fmt"
	"slices"

	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/words"
)

// trim brings a pool that holds more slots than [pool].max (the cap was
// lowered under it) down to max, for `pool warm` and each release: it
// removes idle slots, those without a warm container first, newest
// first. What was changed in one by hand is kept in the trash first, as
// `pool drain` keeps it (removeIdle); an idle slot a process works in is
// passed over, and a leased one is never removed: its release trims
// again. It says what it removed and kept.
func (p *Pool) trim(ctx context.Context) error {
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

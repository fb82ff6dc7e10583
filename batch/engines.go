package batch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
)

// A batch with engines (--engines, or [batch].engines) spreads its tasks
// over several container engines, named as Docker contexts: each runs
// at most --parallelism tasks at once, and each task goes to the engine
// with the most free places (the first named, on a tie). Every engine
// must answer and have the image (pulled if missing) when the batch
// starts; one that does not is left out with a warning (an error in
// strict mode). When a task does not pass and its engine no longer
// answers, the engine is left out from then on and the task runs once
// more on another; its result says which engine ran it, and which it
// was retried from.

// fleet is the engines of a batch and how busy each is.
type fleet struct {
	mu      sync.Mutex
	freed   *sync.Cond
	engines []*engine
	per     int // tasks at once on each engine
}

// engine is one engine of a fleet.
type engine struct {
	*sandbox.Engine
	busy int
	dead bool
}

// connectFleet reaches the engines named, each with the policy's
// connect_timeout, and makes sure each has the image.
func connectFleet(ctx context.Context, home *repo.Repo, names []string, per int, strict bool) (*fleet, error) {
	pol, err := home.Policy()
	if err != nil {
		return nil, err
	}
	if pol.Container.Image == "" {
		return nil, exitcode.New(exitcode.Runtime, "cannot spread the batch over engines: the policy names no [container].image")
	}
	f := &fleet{per: per}
	f.freed = sync.NewCond(&f.mu)
	for _, name := range names {
		e, err := sandbox.Connect(ctx, pol, name)
		if err == nil {
			if err = e.Runtime.EnsureImage(ctx, pol.Container.Image, home.Stderr()); err == nil {
				f.engines = append(f.engines, &engine{Engine: e})
				continue
			}
			e.Runtime.Close()
			err = fmt.Errorf("cannot get image %s: %w", pol.Container.Image, err)
		}
		if strict || pol.Isolation.Strict {
			return nil, exitcode.New(exitcode.Runtime, "engine %s: %v; strict mode forbids leaving it out", name, err)
		}
		home.Warnf("engine %s is left out of the batch: %v", name, err)
	}
	if len(f.engines) == 0 {
		return nil, exitcode.New(exitcode.Runtime, "none of the engines %s answers with the image", strings.Join(names, ", "))
	}
	return f, nil
}

// size is how many tasks the fleet runs at once.
func (f *fleet) size() int { return f.per * len(f.engines) }

// take waits for a free place on a live engine other than avoid (nil:
// any), takes it on the one with the most free places, and returns it;
// nil when no live engine is left but avoid.
func (f *fleet) take(ctx context.Context, avoid *engine) *engine {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ctx.Err() == nil {
		var best *engine
		live := false
		for _, e := range f.engines {
			if e.dead || e == avoid {
				continue
			}
			live = true
			if e.busy < f.per && (best == nil || e.busy < best.busy) {
				best = e
			}
		}
		if !live {
			return nil
		}
		if best != nil {
			best.busy++
			return best
		}
		f.freed.Wait()
	}
	return nil
}

// give returns a place taken on e.
func (f *fleet) give(e *engine) {
	f.mu.Lock()
	e.busy--
	f.mu.Unlock()
	f.freed.Broadcast()
}

// answers reports whether e still answers; when not, it is left out from
// then on.
func (f *fleet) answers(ctx context.Context, e *engine) bool {
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := e.Runtime.Version(wait); err == nil {
		return true
	}
	f.mu.Lock()
	e.dead = true
	f.mu.Unlock()
	f.freed.Broadcast()
	return false
}

// wake lets every waiting take see that ctx ended.
func (f *fleet) wake(ctx context.Context) {
	<-ctx.Done()
	f.freed.Broadcast()
}

func (f *fleet) close() error {
	var errs []error
	for _, e := range f.engines {
		errs = append(errs, e.Runtime.Close())
	}
	return errors.Join(errs...)
}

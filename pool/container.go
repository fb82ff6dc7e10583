package pool

import (
	"context"
	"errors"
	"os"

	"github.com/git-apex/git-apex/disarm"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// Container makes a container for a batch task in a leased slot, as a
// full env's (with a sandbox at the slot's commit), on engine (nil: the
// repository's own, which must answer and have the image), and returns
// its id. When the lease took a warm container (AcquireWarm), that one
// is returned instead, given the task's files written since (relative
// paths) when it got the slot's by copy. The slot is marked contained:
// its release then trusts nothing in it.
func (p *Pool) Container(ctx context.Context, l *Lease, id policy.Identity, engine *sandbox.Engine, written []string) (string, error) {
	pol, err := p.r.Policy()
	if err != nil {
		return "", err
	}
	l.contained = true
	if l.warm.Container != "" {
		s := sandbox.For(p.r, l.box, l.Path(), "").On(engine)
		if err := s.CopyFiles(ctx, l.warm.Container, written, pol); err != nil {
			return "", errors.Join(err, p.DropContainer(context.WithoutCancel(ctx), l, l.warm.Container, id, false, engine))
		}
		return l.warm.Container, nil
	}
	if engine == nil {
		if reason := sandbox.Ready(ctx, p.r, pol); reason != "" {
			return "", exitcode.New(exitcode.Runtime, "cannot run %s in a container: %s", id, reason)
		}
	}
	if engine != nil && l.warm == (state.Warm{}) {
		// The engine is recorded first, for reclaimDead should this process die.
		l.warm = state.Warm{Engine: engine.Name}
		if err := p.r.Store.Pool().SetWarm(ctx, l.Slot.ID, l.warm); err != nil {
			return "", err
		}
	}
	l.box = id.String()
	return p.makeContainer(ctx, l.Path(), l.box, l.commit, engine, pol)
}

// makeContainer makes the sandbox named box for the worktree at commit,
// and its container on engine, removing the sandbox when that fails.
func (p *Pool) makeContainer(ctx context.Context, worktree, box, commit string, engine *sandbox.Engine, pol *policy.Policy) (string, error) {
	s := sandbox.For(p.r, box, worktree, "").On(engine)
	if err := s.Make(ctx, commit, pol); err != nil {
		return "", err
	}
	cid, err := s.MakeContainer(ctx, pol)
	if err != nil {
		os.RemoveAll(s.Dir())
	}
	return cid, err
}

// DropContainer removes a batch task's container (on engine; nil: the
// repository's own) and its sandbox. With keep (a failed task's slot
// kept as an env), what the task made (its commits, and in copy mode its
// files) comes back to the slot first. Set-id bits the task put on files
// are cleared (disarm.Tree): git's reset of the slot keeps them.
func (p *Pool) DropContainer(ctx context.Context, l *Lease, ctr string, id policy.Identity, keep bool, engine *sandbox.Engine) error {
	s := sandbox.For(p.r, l.box, l.Path(), "").On(engine)
	on, err := sandbox.EngineOf(ctx, p.r, engine)
	if err != nil {
		return err
	}
	if keep {
		if _, err := s.BringBack(ctx, nil, ctr); err != nil {
			p.r.Warnf("%s: %v", id, err)
		}
	}
	err = on.Runtime.Remove(ctx, ctr)
	if !s.Copied() { // the slot is reset next, or kept: git's reset leaves a set-id bit
		_, derr := disarm.Tree(l.Path(), false)
		err = errors.Join(err, derr)
	}
	err = errors.Join(err, os.RemoveAll(s.Dir()))
	if err == nil && ctr == l.warm.Container {
		l.warm.Container = "" // gone; the engine stays recorded until the release
	}
	return err
}

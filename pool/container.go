package pool

import (
	"context"
	"errors"
	"os"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sandbox"
)

// Container makes a container for a batch task in a leased slot, as a
// full env's (with a sandbox at the slot's commit), on engine (nil: the
// repository's own, which must answer and have the image), and returns
// its id. The slot is marked contained: its release then trusts nothing
// in it.
func (p *Pool) Container(ctx context.Context, l *Lease, id policy.Identity, engine *sandbox.Engine) (string, error) {
	pol, err := p.r.Policy()
	if err != nil {
		return "", err
	}
	if engine == nil {
		if reason := sandbox.Ready(ctx, p.r, pol); reason != "" {
			return "", exitcode.New(exitcode.Runtime, "cannot run %s in a container: %s", id, reason)
		}
	}
	s := sandbox.For(p.r, id.String(), l.Path(), "").On(engine)
	l.contained = true
	if err := s.Make(ctx, l.commit, pol); err != nil {
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
// files) comes back to the slot first.
func (p *Pool) DropContainer(ctx context.Context, l *Lease, ctr string, id policy.Identity, keep bool, engine *sandbox.Engine) error {
	s := sandbox.For(p.r, id.String(), l.Path(), "").On(engine)
	rt, err := p.r.Runtime(ctx)
	if engine != nil {
		rt, err = engine.Runtime, nil
	}
	if err != nil {
		return err
	}
	if keep {
		if _, err := s.BringBack(ctx, nil, ctr); err != nil {
			p.r.Warnf("%s: %v", id, err)
		}
	}
	return errors.Join(rt.Remove(ctx, ctr), os.RemoveAll(s.Dir()))
}

package pool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// Warm containers. With [pool].containers = N, `pool warm` also keeps N
// containers made ahead on each engine ([batch].engines, else the
// repository's own), each for an idle slot at the pool commit: created,
// started and given the slot's files (mounted, or copied in), exactly
// as a batch task's container would be. A full-isolation batch task
// whose base is that commit takes one on its engine and is given only
// its own files; the container is removed after the task like any
// other, so no container ever serves two tasks. A warm container is
// used only for the policy and engine it was made for (its fingerprint:
// the [container] table, trust, the engine's address and the commit);
// one that no longer fits, or has gone, is removed when found and the
// task gets a new container. start takes slots without a warm container
// first, removing the container of one it does take. When
// [pool].containers is set, a batch that took warm containers has the
// pool make as many again in the background when it ends.

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
// files) comes back to the slot first.
func (p *Pool) DropContainer(ctx context.Context, l *Lease, ctr string, id policy.Identity, keep bool, engine *sandbox.Engine) error {
	s := sandbox.For(p.r, l.box, l.Path(), "").On(engine)
	rt, err := p.runtimeOf(ctx, engine)
	if err != nil {
		return err
	}
	if keep {
		if _, err := s.BringBack(ctx, nil, ctr); err != nil {
			p.r.Warnf("%s: %v", id, err)
		}
	}
	err = errors.Join(rt.Remove(ctx, ctr), os.RemoveAll(s.Dir()))
	if err == nil && ctr == l.warm.Container {
		l.warm.Container = "" // gone; the engine stays recorded until the release
	}
	return err
}

// WarmSandboxes are the sandbox names of the pool's warm containers.
func (p *Pool) WarmSandboxes(ctx context.Context) []string {
	slots, _ := p.r.Store.Slots(ctx)
	var names []string
	for _, s := range slots {
		if s.Warm.Container != "" {
			names = append(names, sandbox.ContainerName(p.r, boxOf(s)))
		}
	}
	return names
}

// runtimeOf is engine's runtime; nil: the repository's own.
func (p *Pool) runtimeOf(ctx context.Context, engine *sandbox.Engine) (container.Runtime, error) {
	if engine != nil {
		return engine.Runtime, nil
	}
	return p.r.Runtime(ctx)
}

// boxOf names the sandbox (and container) of a slot's warm container.
func boxOf(slot *state.Slot) string { return "pool-" + filepath.Base(slot.Path) }

// fingerprint is what a warm container on engine (nil: the repository's
// own) at commit must match to serve a task under pol.
func (p *Pool) fingerprint(ctx context.Context, pol *policy.Policy, engine *sandbox.Engine, commit string) (string, error) {
	trusted, _, err := p.r.Trusted(pol)
	if err != nil {
		return "", err
	}
	var ep container.Endpoint
	if engine != nil {
		ep = engine.Endpoint
	} else if ep, err = p.r.Endpoint(ctx); err != nil {
		return "", err
	}
	data, err := json.Marshal(struct {
		Container policy.Container
		Trusted   bool
		Host      string
		Commit    string
	}{pol.Container, trusted, ep.Host, commit})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

// engineName is the name warm containers record for engine.
func engineName(engine *sandbox.Engine) string {
	if engine == nil {
		return ""
	}
	return engine.Name
}

// AcquireWarm leases, for a full-isolation task at commit on engine
// (nil: the repository's own), an idle slot whose warm container fits,
// taking the container for the task: it is no longer the pool's. When
// none fits and answers, it acquires a slot as Acquire does.
func (p *Pool) AcquireWarm(ctx context.Context, commit string, limit int, timeout time.Duration, engine *sandbox.Engine) (*Lease, error) {
	pol, err := p.r.Policy()
	if err != nil {
		return nil, err
	}
	spec, err := p.fingerprint(ctx, pol, engine, commit)
	if err != nil {
		return p.Acquire(ctx, commit, limit, timeout)
	}
	pid, start := hostexec.Self()
	for {
		slot, err := p.r.Store.LeaseWarm(ctx, pid, start, engineName(engine), spec)
		if err != nil || slot == nil {
			if err != nil {
				return nil, err
			}
			return p.Acquire(ctx, commit, limit, timeout)
		}
		l := &Lease{Slot: slot, commit: commit, warm: slot.Warm, box: boxOf(slot)}
		// The engine stays recorded, for reclaimDead should this process die.
		if err := p.r.Store.SetWarm(ctx, slot.ID, state.Warm{Engine: slot.Warm.Engine}); err != nil {
			p.Release(context.WithoutCancel(ctx), l)
			return nil, err
		}
		if p.answers(ctx, engine, slot.Warm.Container) {
			return l, nil
		}
		p.dropWarm(ctx, slot, engine)
		if err := p.Release(ctx, &Lease{Slot: slot, contained: true}); err != nil {
			return nil, err
		}
	}
}

// answers reports whether a warm container on engine is running.
func (p *Pool) answers(ctx context.Context, engine *sandbox.Engine, ctr string) bool {
	rt, err := p.runtimeOf(ctx, engine)
	if err != nil {
		return false
	}
	info, err := rt.Inspect(ctx, ctr)
	return err == nil && info.State == "running"
}

// dropWarm removes a leased slot's warm container (on engine, or on the
// one its record names when engine is nil and the record names one) and
// its sandbox, and forgets it, and the engine recorded with it. A
// container that cannot be removed is left, with a warning saying how
// to remove it.
func (p *Pool) dropWarm(ctx context.Context, slot *state.Slot, engine *sandbox.Engine) {
	w := slot.Warm
	ctx = context.WithoutCancel(ctx)
	switch {
	case w == state.Warm{}:
		return
	case w.Container != "":
		p.removeWarm(ctx, slot, engine)
	}
	p.r.Store.SetWarm(ctx, slot.ID, state.Warm{})
	slot.Warm = state.Warm{}
}

// removeWarm removes a slot's warm container and its sandbox, for
// dropWarm.
func (p *Pool) removeWarm(ctx context.Context, slot *state.Slot, engine *sandbox.Engine) {
	w := slot.Warm
	var err error
	if engine == nil && w.Engine != "" {
		var pol *policy.Policy
		if pol, err = p.r.Policy(); err == nil {
			if engine, err = sandbox.Connect(ctx, pol, w.Engine); err == nil {
				defer engine.Runtime.Close()
			}
		}
	}
	var rt container.Runtime
	if err == nil {
		rt, err = p.runtimeOf(ctx, engine)
	}
	if err == nil {
		err = rt.Remove(ctx, w.Container)
	}
	if err != nil {
		where := "this machine's engine"
		if w.Engine != "" {
			where = "engine " + w.Engine
		}
		p.r.Warnf("cannot remove the warm container %s on %s: %v; remove it with `docker rm -f %s` there",
			sandbox.ContainerName(p.r, boxOf(slot)), where, err, w.Container)
	}
	os.RemoveAll(sandbox.For(p.r, boxOf(slot), slot.Path, "").Dir())
}

// reclaimDead removes what a dead holder left of a warm container in its
// slot, found by the slot's sandbox: one a killed `pool warm` was
// making, or one a killed batch task had taken. Either is named after the
// slot, on the engine the slot records.
func (p *Pool) reclaimDead(ctx context.Context, slot *state.Slot) {
	box := sandbox.For(p.r, boxOf(slot), slot.Path, "")
	if _, err := os.Lstat(box.Dir()); err != nil {
		return
	}
	slot.Warm.Container = box.Name()
	p.dropWarm(ctx, slot, nil)
}

// WarmContainers makes warm containers until each engine has per idle
// ones fitting the policy, removing first the idle ones that no longer
// fit. It returns how many it made. An engine that does not answer, or
// lacks the image, is passed over, and named in the error.
func (p *Pool) WarmContainers(ctx context.Context, per int) (int, error) {
	pol, err := p.r.Policy()
	if err != nil {
		return 0, err
	}
	if pol.Container.Image == "" {
		return 0, exitcode.New(exitcode.Usage, "[pool].containers needs a [container].image to make the containers from")
	}
	if _, err := p.Reclaim(ctx, nil); err != nil {
		return 0, err
	}
	commit, err := p.Commit(ctx)
	if err != nil {
		return 0, err
	}
	lock, err := gitx.LockFile(ctx, filepath.Join(p.r.Git.ApexDir(), "pool-warm.lock"))
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	names := pol.Batch.Engines
	if len(names) == 0 {
		names = []string{""}
	}
	made := 0
	var failed []string
	for _, name := range names {
		n, err := p.warmOn(ctx, pol, name, commit, per)
		made += n
		if err != nil {
			if name == "" {
				name = "this machine's"
			}
			failed = append(failed, fmt.Sprintf("engine %s: %v", name, err))
		}
	}
	if len(failed) > 0 {
		return made, exitcode.New(exitcode.Runtime, "warm containers not made on %s", strings.Join(failed, "; "))
	}
	return made, nil
}

// warmOn makes warm containers on the engine named (""; the repository's
// own) until it has per idle ones fitting pol at commit.
func (p *Pool) warmOn(ctx context.Context, pol *policy.Policy, name, commit string, per int) (int, error) {
	var engine *sandbox.Engine
	if name != "" {
		e, err := sandbox.Connect(ctx, pol, name)
		if err != nil {
			return 0, err
		}
		defer e.Runtime.Close()
		engine = e
	}
	rt, err := p.runtimeOf(ctx, engine)
	if err != nil {
		return 0, err
	}
	if err := rt.EnsureImage(ctx, pol.Container.Image, p.r.Stderr()); err != nil {
		return 0, fmt.Errorf("cannot get image %s: %w", pol.Container.Image, err)
	}
	spec, err := p.fingerprint(ctx, pol, engine, commit)
	if err != nil {
		return 0, err
	}
	pid, start := hostexec.Self()
	have := 0
	slots, err := p.r.Store.Slots(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range slots {
		switch {
		case s.Leased() || s.Warm.Container == "" || s.Warm.Engine != name:
		case s.Warm.Spec == spec && p.answers(ctx, engine, s.Warm.Container):
			have++
		default: // made for another policy, or gone: lease it to drop it
			stale, err := p.r.Store.LeaseWarm(ctx, pid, start, name, s.Warm.Spec)
			if err != nil {
				return 0, err
			}
			if stale != nil {
				p.dropWarm(ctx, stale, engine)
				if err := p.Release(ctx, &Lease{Slot: stale, contained: true}); err != nil {
					return 0, err
				}
			}
		}
	}
	made := 0
	for ; have+made < per; made++ {
		if err := p.warmOne(ctx, pol, engine, commit, spec); err != nil {
			return made, err
		}
	}
	return made, nil
}

// warmOne makes one warm container on engine, in an idle slot without
// one (a new slot when there is none) at commit.
func (p *Pool) warmOne(ctx context.Context, pol *policy.Policy, engine *sandbox.Engine, commit, spec string) error {
	pid, start := hostexec.Self()
	slot, err := p.r.Store.Lease(ctx, pid, start, false)
	if err != nil {
		return err
	}
	if slot == nil {
		if slot, err = p.newSlot(ctx, commit, pid, start, math.MaxInt); err != nil {
			return err
		}
	}
	l := &Lease{Slot: slot, commit: commit, contained: true}
	if slot.PoolCommit != commit {
		if err := p.r.Git.CheckoutDetached(ctx, slot.Path, commit); err != nil {
			return errors.Join(err, p.Release(context.WithoutCancel(ctx), l))
		}
		slot.PoolCommit = commit
	}
	// The engine is recorded first, for reclaimDead should this process die.
	if err := p.r.Store.SetWarm(ctx, slot.ID, state.Warm{Engine: engineName(engine)}); err != nil {
		return errors.Join(err, p.Release(context.WithoutCancel(ctx), l))
	}
	cid, err := p.makeContainer(ctx, slot.Path, boxOf(slot), commit, engine, pol)
	if err != nil {
		return errors.Join(err, p.Release(context.WithoutCancel(ctx), l))
	}
	if err := p.r.Store.SetWarm(ctx, slot.ID, state.Warm{Engine: engineName(engine), Container: cid, Spec: spec}); err != nil {
		return err
	}
	return p.r.Store.Free(ctx, slot.ID, commit)
}

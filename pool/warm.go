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
	"github.com/git-apex/git-apex/flock"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/words"
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

// WarmUp is `pool warm`: it makes slots until the pool has size of them,
// then warm containers until each engine has containers idle ones (each
// -1: the policy's [pool] setting), and says what it made. With no size,
// it still brings a pool above [pool].max down to it (trim), and says
// how to have slots made. Neither set, nor [pool].max, is a usage error.
func (p *Pool) WarmUp(ctx context.Context, size, containers int) error {
	pol, err := p.r.Policy()
	if err != nil {
		return err
	}
	if size < 0 {
		size = pol.Pool.Size
	}
	if containers < 0 {
		containers = pol.Pool.Containers
	}
	if size == 0 && containers == 0 && pol.Pool.Max == 0 {
		return exitcode.New(exitcode.Usage, "no pool size: set [pool].size or [pool].containers in the policy, or pass --size N")
	}
	if size > pol.Pool.Max && pol.Pool.Max > 0 {
		return exitcode.New(exitcode.Usage, "--size %d is more than [pool].max = %d, the most slots the pool holds: ask for fewer, or raise [pool].max in the policy", size, pol.Pool.Max)
	}
	if size > 0 || pol.Pool.Max > 0 {
		slots, err := p.Warm(ctx, size) // size 0: trims, makes none
		if err != nil {
			return err
		}
		if size == 0 && containers == 0 {
			p.r.Notef("the pool has %s, at most [pool].max = %d; no [pool].size, so none was made: set it in the policy, or pass --size N, to have slots made", words.Count(len(slots), "slot"), pol.Pool.Max)
		} else {
			p.r.Notef("the pool has %s", words.Count(len(slots), "slot"))
		}
	}
	if containers == 0 {
		return nil
	}
	made, err := warmer{p}.make(ctx, containers)
	p.r.Notef("made %s", words.Count(made, "warm container"))
	return err
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
	wr := warmer{p}
	spec, err := wr.fingerprint(ctx, pol, engine, commit)
	if err != nil {
		return p.Acquire(ctx, commit, limit, timeout)
	}
	pid, start := hostexec.Self()
	for {
		slot, err := p.r.Store.Pool().LeaseWarm(ctx, pid, start, engineName(engine), spec)
		if err != nil || slot == nil {
			if err != nil {
				return nil, err
			}
			return p.Acquire(ctx, commit, limit, timeout)
		}
		if why := p.broken(slot); why != "" {
			p.dropWarm(ctx, slot, engine)
			p.discard(ctx, nil, slot, why)
			continue
		}
		l := &Lease{Slot: slot, commit: commit, warm: slot.Warm, box: boxOf(slot)}
		// The engine stays recorded, for reclaimDead should this process die.
		if err := p.r.Store.Pool().SetWarm(ctx, slot.ID, state.Warm{Engine: slot.Warm.Engine}); err != nil {
			p.Release(context.WithoutCancel(ctx), l)
			return nil, err
		}
		if wr.answers(ctx, engine, slot.Warm.Container) {
			return l, nil
		}
		p.r.Warnf("the warm container %s is not running; the task gets a new one", sandbox.ContainerName(p.r, boxOf(slot)))
		p.dropWarm(ctx, slot, engine)
		if err := p.Release(ctx, &Lease{Slot: slot, contained: true}); err != nil {
			return nil, err
		}
	}
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
		warmer{p}.removeWarm(ctx, slot, engine)
	}
	p.r.Store.Pool().SetWarm(ctx, slot.ID, state.Warm{})
	slot.Warm = state.Warm{}
}

// reclaimDead removes what a dead holder left of a container in its
// slot, before the slot is reset: a warm container a killed `pool warm`
// was making, or one a killed batch task had taken, found by the slot's
// sandbox; and any container labelled as working in the slot (a killed
// batch's task container, still running, still writing there), found on
// the engine the slot records, with its sandbox. Containers are looked
// for only when some sandbox exists: a holder that made none left none.
func (p *Pool) reclaimDead(ctx context.Context, slot *state.Slot) {
	box := sandbox.For(p.r, boxOf(slot), slot.Path, "")
	if _, err := os.Lstat(box.Dir()); err == nil {
		slot.Warm.Container = box.Name()
	}
	if boxes, _ := os.ReadDir(sandbox.Root(p.r)); len(boxes) > 0 {
		warmer{p}.removeLeft(ctx, slot)
	}
	p.dropWarm(ctx, slot, nil) // and forgets the engine recorded
}

// WarmSandboxes are the sandbox names of the pool's warm containers.
func (p *Pool) WarmSandboxes(ctx context.Context) []string {
	slots, _ := p.r.Store.Pool().All(ctx)
	var names []string
	for _, s := range slots {
		if s.Warm.Container != "" {
			names = append(names, sandbox.ContainerName(p.r, boxOf(s)))
		}
	}
	return names
}

// boxOf names the sandbox (and container) of a slot's warm container.
func boxOf(slot *state.Slot) string { return "pool-" + filepath.Base(slot.Path) }

// engineName is the name warm containers record for engine.
func engineName(engine *sandbox.Engine) string {
	if engine == nil {
		return ""
	}
	return engine.Name
}

// warmer makes, checks and removes the pool's warm containers (see
// "Warm containers").
type warmer struct{ *Pool }

// make makes warm containers until each engine has per idle ones
// fitting the policy, removing first the idle ones that no longer fit.
// It returns how many it made. An engine that does not answer, or lacks
// the image, is passed over, and named in the error.
func (w warmer) make(ctx context.Context, per int) (int, error) {
	pol, err := w.r.Policy()
	if err != nil {
		return 0, err
	}
	if pol.Container.Image == "" {
		return 0, exitcode.New(exitcode.Usage, "[pool].containers needs a [container].image to make the containers from")
	}
	if _, err := w.Reclaim(ctx, nil); err != nil {
		return 0, err
	}
	commit, err := w.Commit(ctx)
	if err != nil {
		return 0, err
	}
	lock, err := flock.Take(ctx, filepath.Join(w.r.Git.ApexDir(), "pool-warm.lock"))
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
		n, err := w.warmOn(ctx, pol, name, commit, per)
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
func (w warmer) warmOn(ctx context.Context, pol *policy.Policy, name, commit string, per int) (int, error) {
	var engine *sandbox.Engine
	if name != "" {
		e, err := sandbox.Connect(ctx, pol, name)
		if err != nil {
			return 0, err
		}
		defer e.Runtime.Close()
		engine = e
	}
	on, err := sandbox.EngineOf(ctx, w.r, engine)
	if err != nil {
		return 0, err
	}
	if err := on.Runtime.EnsureImage(ctx, pol.Container.Image, w.r.Stderr()); err != nil {
		return 0, fmt.Errorf("cannot get image %s: %w", pol.Container.Image, err)
	}
	spec, err := w.fingerprint(ctx, pol, engine, commit)
	if err != nil {
		return 0, err
	}
	pid, start := hostexec.Self()
	have := 0
	slots, err := w.r.Store.Pool().All(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range slots {
		switch {
		case s.Leased() || s.Warm.Container == "" || s.Warm.Engine != name:
		case s.Warm.Spec == spec && w.answers(ctx, engine, s.Warm.Container):
			have++
		default: // made for another policy, or gone: lease it to drop it
			stale, err := w.r.Store.Pool().LeaseSlot(ctx, pid, start, s.ID)
			if err != nil {
				return 0, err
			}
			if stale != nil {
				w.dropWarm(ctx, stale, engine)
				if err := w.Release(ctx, &Lease{Slot: stale, contained: true}); err != nil {
					return 0, err
				}
			}
		}
	}
	made := 0
	for ; have+made < per; made++ {
		if err := w.warmOne(ctx, pol, engine, commit, spec); err != nil {
			return made, err
		}
	}
	return made, nil
}

// warmOne makes one warm container on engine, in an idle slot without
// one (a new slot when there is none) at commit.
func (w warmer) warmOne(ctx context.Context, pol *policy.Policy, engine *sandbox.Engine, commit, spec string) error {
	pid, start := hostexec.Self()
	slot, err := w.r.Store.Pool().Lease(ctx, pid, start, false)
	for ; slot != nil && err == nil; slot, err = w.r.Store.Pool().Lease(ctx, pid, start, false) {
		why := w.broken(slot)
		if why == "" {
			break
		}
		w.discard(ctx, nil, slot, why)
	}
	if err != nil {
		return err
	}
	if slot == nil {
		limit := maxSlots(pol, math.MaxInt)
		if slot, err = w.newSlot(ctx, commit, pid, start, limit); err != nil {
			return err
		}
		if slot == nil {
			return fmt.Errorf("the pool holds [pool].max = %d slots, and none is idle for another", limit)
		}
	}
	l := &Lease{Slot: slot, commit: commit, contained: true}
	if slot.PoolCommit != commit {
		if err := w.r.Git.CheckoutDetached(ctx, slot.Path, commit); err != nil {
			return errors.Join(err, w.Release(context.WithoutCancel(ctx), l))
		}
		slot.PoolCommit = commit
	}
	// The engine is recorded first, for reclaimDead should this process die.
	if err := w.r.Store.Pool().SetWarm(ctx, slot.ID, state.Warm{Engine: engineName(engine)}); err != nil {
		return errors.Join(err, w.Release(context.WithoutCancel(ctx), l))
	}
	cid, err := w.makeContainer(ctx, slot.Path, boxOf(slot), commit, engine, pol)
	if err != nil {
		return errors.Join(err, w.Release(context.WithoutCancel(ctx), l))
	}
	if err := w.r.Store.Pool().SetWarm(ctx, slot.ID, state.Warm{Engine: engineName(engine), Container: cid, Spec: spec}); err != nil {
		return err
	}
	return w.r.Store.Pool().Free(ctx, slot.ID, commit)
}

// fingerprint is what a warm container on engine (nil: the repository's
// own) at commit must match to serve a task under pol.
func (w warmer) fingerprint(ctx context.Context, pol *policy.Policy, engine *sandbox.Engine, commit string) (string, error) {
	trusted, _, err := w.r.Trusted(pol)
	if err != nil {
		return "", err
	}
	on, err := sandbox.EngineOf(ctx, w.r, engine)
	if err != nil {
		return "", err
	}
	made := pol.Container // what the container is made with: not how long to wait for the engine, nor the shell
	made.ConnectTimeout, made.Shell = 0, ""
	data, err := json.Marshal(struct {
		Container policy.Container
		Trusted   bool
		Host      string
		Commit    string
	}{made, trusted, on.Endpoint.Host, commit})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12]), nil
}

// answers reports whether a warm container on engine is running.
func (w warmer) answers(ctx context.Context, engine *sandbox.Engine, ctr string) bool {
	on, err := sandbox.EngineOf(ctx, w.r, engine)
	if err != nil {
		return false
	}
	info, err := on.Runtime.Inspect(ctx, ctr)
	return err == nil && info.State == "running"
}

// removeWarm removes a slot's warm container and its sandbox, for
// dropWarm.
func (w warmer) removeWarm(ctx context.Context, slot *state.Slot, engine *sandbox.Engine) {
	rec := slot.Warm
	var err error
	if engine == nil && rec.Engine != "" {
		var done func()
		if engine, done, err = w.connect(ctx, rec.Engine); err == nil {
			defer done()
		}
	}
	var on *sandbox.Engine
	if err == nil {
		on, err = sandbox.EngineOf(ctx, w.r, engine)
	}
	if err == nil {
		err = on.Runtime.Remove(ctx, rec.Container)
	}
	if err != nil {
		w.r.Warnf("cannot remove the warm container %s on %s: %v; remove it with `docker rm -f %s` there",
			sandbox.ContainerName(w.r, boxOf(slot)), engineWhere(rec.Engine), err, rec.Container)
	}
	os.RemoveAll(sandbox.For(w.r, boxOf(slot), slot.Path, "").Dir())
}

// removeLeft removes the containers labelled as working in a dead
// holder's slot, on the engine the slot records, and their sandboxes,
// for reclaimDead. One that cannot be removed is named with how to
// remove it.
func (w warmer) removeLeft(ctx context.Context, slot *state.Slot) {
	var engine *sandbox.Engine
	var err error
	if slot.Warm.Engine != "" {
		var done func()
		if engine, done, err = w.connect(ctx, slot.Warm.Engine); err == nil {
			defer done()
		}
	}
	var on *sandbox.Engine
	if err == nil {
		on, err = sandbox.EngineOf(ctx, w.r, engine)
	}
	var left []container.ContainerInfo
	if err == nil {
		left, err = on.Runtime.List(ctx, map[string]string{sandbox.LabelRepo: w.r.Key(), sandbox.LabelWorktree: slot.Path})
	}
	if err != nil {
		w.r.Warnf("cannot look for containers left working in pool slot %s on %s: %v; remove those labelled %s=%s there with `docker rm -f`",
			slot.Path, engineWhere(slot.Warm.Engine), err, sandbox.LabelWorktree, slot.Path)
		return
	}
	for _, c := range left {
		if err := on.Runtime.Remove(ctx, c.ID); err != nil {
			w.r.Warnf("cannot remove the container %s left in pool slot %s: %v; remove it with `docker rm -f %s`", c.Name, slot.Path, err, c.ID)
			continue
		}
		os.RemoveAll(sandbox.For(w.r, c.Labels[sandbox.LabelEnv], slot.Path, "").Dir())
	}
}

// connect connects to the engine named (a Docker context) under the
// repository's policy; done closes it.
func (w warmer) connect(ctx context.Context, name string) (*sandbox.Engine, func(), error) {
	pol, err := w.r.Policy()
	if err != nil {
		return nil, nil, err
	}
	engine, err := sandbox.Connect(ctx, pol, name)
	if err != nil {
		return nil, nil, err
	}
	return engine, func() { engine.Runtime.Close() }, nil
}

// engineWhere names an engine for a message.
func engineWhere(name string) string {
	if name == "" {
		return "this machine's engine"
	}
	return "engine " + name
}

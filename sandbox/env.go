package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// BringBackEnv brings the commits a full env's container made to the
// host (see Sandbox.BringBack) and records what moved. An env whose
// sandbox's tip did not move costs one file read, and needs no runtime.
func BringBackEnv(ctx context.Context, r *repo.Repo, lk *gitx.Locked, env *state.Env) (Result, error) {
	s := OfEnv(r, env)
	if !env.Contained() || !env.Live() || env.Container == "" || !s.Exists() || s.Unchanged() {
		return Result{}, nil
	}
	if err := heal.CheckGitfile(r, env); err != nil {
		return Result{}, err
	}
	b, err := s.BringBack(ctx, lk, env.Container)
	var records []error
	for _, c := range b.Conflicts {
		records = append(records, r.Store.Record(ctx, env, "kept", c))
	}
	if b.Files > 0 {
		records = append(records, r.Store.Record(ctx, env, "synced", fmt.Sprintf("%d files from the container", b.Files)))
	}
	if err != nil {
		return b, err
	}
	switch {
	case b.Kept != "":
		records = append(records, r.Store.Record(ctx, env, "kept", b.Why+" as "+b.Kept))
	case b.To != "":
		records = append(records, r.Store.Record(ctx, env, "synced", fmt.Sprintf("%s..%s from the container", repo.Short(b.From), repo.Short(b.To))))
	}
	if env.Metadata[state.NoAnswerKey] != "" { // it answered: the hooks may read it again
		delete(env.Metadata, state.NoAnswerKey)
		records = append(records, r.Store.Save(ctx, env, "synced", "its container answered again"))
	}
	return b, errors.Join(records...)
}

// Running returns the runtime and a running container for a full env,
// on the engine it was made on (state.Env.Engine) whatever the
// environment names now: it starts one that stopped and, under the
// repository lock, makes one that was deleted by hand, or that an
// earlier git-apex made with the old layout, again, on that engine. An
// engine that does not answer is exit 6, and no container is made
// elsewhere. An env made before engines were recorded records the
// engine its container is found on. One whose mounted worktree has
// submodules below its top (made before they were refused) is refused,
// exit 3, and runs nothing.
func Running(ctx context.Context, r *repo.Repo, env *state.Env) (container.Runtime, string, error) {
	s := OfEnv(r, env)
	if !s.Copied() { // made before submodules below the top were refused
		if err := s.refuseNested(slices.Sorted(maps.Keys(s.gitlinks()))); err != nil {
			return nil, "", err
		}
	}
	eng, err := s.on(ctx)
	if err != nil {
		return nil, "", exitcode.New(exitcode.Runtime, "cannot run in %s: %v", env.Identity, err)
	}
	rt := eng.Runtime
	info, err := rt.Inspect(ctx, env.Container)
	if err != nil {
		return nil, "", err
	}
	if env.Engine == "" && info.State != "missing" {
		if err := pin(ctx, r, env); err != nil {
			return nil, "", err
		}
	}
	switch {
	case info.State == "missing" || info.Labels[LabelLayout] != Layout:
	case info.State == "running":
		return rt, env.Container, nil
	default:
		if err := rt.Start(ctx, env.Container); err != nil {
			return nil, "", fmt.Errorf("cannot start the container of %s: %w", env.Identity, err)
		}
		return rt, env.Container, nil
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		return nil, "", err
	}
	defer lk.Unlock()
	fresh, err := r.Store.Live(ctx, env.Identity)
	if err != nil {
		return nil, "", err
	}
	if fresh != nil && fresh.Container != env.Container {
		env.Container = fresh.Container // made again meanwhile: the exchange after the command uses it
		return rt, fresh.Container, nil
	}
	id, err := Remake(ctx, r, env)
	return rt, id, err
}

// Started returns the runtime with a full env's container running,
// starting it if it stopped; an error when it is gone (Running makes it
// again).
func Started(ctx context.Context, r *repo.Repo, env *state.Env) (container.Runtime, error) {
	return OfEnv(r, env).running(ctx, env.Container)
}

// Remake makes a full env's container again, over its sandbox
// (made at the host's tip when it has none), and records it. A container
// still there (one with the old layout) is removed first. The caller
// holds the repository lock.
func Remake(ctx context.Context, r *repo.Repo, env *state.Env) (string, error) {
	pol, err := r.Policy()
	if err != nil {
		return "", err
	}
	s := OfEnv(r, env)
	eng, err := s.on(ctx)
	if err != nil {
		return "", exitcode.New(exitcode.Runtime, "cannot make the container of %s again: %v", env.Identity, err)
	}
	rt := eng.Runtime
	tip, err := s.HostTip(ctx)
	if err == nil && (!s.Exists() || s.Copied()) { // a copied container's files come from the host again
		err = s.Make(ctx, tip, pol)
	} else if err == nil {
		err = s.ProtectGitlinks(ctx, tip, true)
	}
	if err != nil {
		return "", fmt.Errorf("cannot make the private git directory of %s: %w", env.Identity, err)
	}
	old := env.Container
	why := "was gone"
	if info, err := rt.Inspect(ctx, old); err == nil && info.State != "missing" {
		why = "had the old layout, which mounted the repository's git directory"
		if err := rt.Remove(ctx, old); err != nil {
			return "", err
		}
	}
	id, err := s.MakeContainer(ctx, pol)
	if err != nil {
		return "", exitcode.New(exitcode.Runtime, "cannot make the container of %s again: %v", env.Identity, err)
	}
	env.Container = id
	if env.Engine == "" {
		ep, err := r.Endpoint(ctx)
		if err != nil {
			return "", err
		}
		env.Engine = ep.Record()
	}
	if err := r.Store.Save(ctx, env, "recreated", "container "+repo.Short(old)+" "+why+"; made "+repo.Short(id)); err != nil {
		return "", err
	}
	r.Notef("%s: its container %s; made it again", env.Identity, why)
	return id, nil
}

// pin records, for a full env made before engines were recorded, the
// repository's engine, where its container was just found.
func pin(ctx context.Context, r *repo.Repo, env *state.Env) error {
	ep, err := r.Endpoint(ctx)
	if err != nil {
		return err
	}
	env.Engine = ep.Record()
	return r.Store.Save(ctx, env, "pinned", "its container "+repo.Short(env.Container)+" is on "+ep.String())
}

// Reach checks that the engine a full env's container is on answers
// (the one it was made on, whatever the environment names now); nil for
// an env with no container.
func Reach(ctx context.Context, r *repo.Repo, env *state.Env) error {
	if !env.Contained() || !env.Live() || env.Container == "" {
		return nil
	}
	_, err := OfEnv(r, env).on(ctx)
	return err
}

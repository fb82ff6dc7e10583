package repo

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// connect connects to the container engine found as the Docker CLI
// finds it, and checks that it answers within wait.
func connect(ctx context.Context, wait time.Duration) (container.Runtime, container.Endpoint, string, error) {
	ep, err := container.FindEndpoint()
	if err != nil {
		return nil, ep, "", err
	}
	rt, version, err := container.Reach(ctx, ep, wait)
	return rt, ep, version, err
}

// reached is an engine connected to, or why it could not be.
type reached struct {
	rt  container.Runtime
	ep  container.Endpoint
	err error
}

// reach connects to the engine at ep once per repository, and checks
// that it answers within the policy's connect_timeout; later calls for
// the same engine (the same record) get the same answer.
func (r *Repo) reach(ctx context.Context, ep container.Endpoint) *reached {
	r.enginesMu.Lock()
	defer r.enginesMu.Unlock()
	key := ep.Record()
	if e, ok := r.engines[key]; ok {
		return e
	}
	wait := time.Duration(policy.Default().Container.ConnectTimeout)
	if pol, err := r.Policy(); err == nil {
		wait = time.Duration(pol.Container.ConnectTimeout)
	}
	rt, _, err := container.Reach(ctx, ep, wait)
	e := &reached{rt: rt, ep: ep, err: err}
	if ctx.Err() == nil { // an interrupted connection says nothing of the engine
		if r.engines == nil {
			r.engines = map[string]*reached{}
		}
		r.engines[key] = e
	}
	return e
}

// Runtime returns the container runtime of the engine the environment
// names (found as the Docker CLI finds it), or why there is none. A full
// env's container is reached through Engine instead.
func (r *Repo) Runtime(ctx context.Context) (container.Runtime, error) {
	if r.rt == nil && r.rtErr == nil {
		ep, err := container.FindEndpoint()
		if err == nil {
			e := r.reach(ctx, ep)
			r.rt, r.engine, err = e.rt, e.ep, e.err
		}
		if err != nil {
			r.rtErr = fmt.Errorf("no container runtime answers (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
		}
	}
	return r.rt, r.rtErr
}

// Engine returns the runtime of the engine a full env's record names
// (state.Env.Engine, a container.Endpoint.Record), whatever DOCKER_HOST
// and DOCKER_CONTEXT say now, or why it does not answer; for "" (an env
// made before engines were recorded) the repository's Runtime.
func (r *Repo) Engine(ctx context.Context, rec string) (container.Runtime, container.Endpoint, error) {
	if rec == "" {
		rt, err := r.Runtime(ctx)
		return rt, r.engine, err
	}
	ep, err := container.Recorded(rec)
	if err != nil {
		return nil, ep, err
	}
	e := r.reach(ctx, ep)
	if e.err != nil {
		return nil, ep, fmt.Errorf("its engine %s does not answer: %w", ep, e.err)
	}
	return e.rt, e.ep, nil
}

// Reached is an engine that answers.
type Reached struct {
	Endpoint container.Endpoint
	Runtime  container.Runtime
}

// Engines are the engines the repository's containers may be on that
// answer: the one the environment names and those live envs record, one per
// address, in the order of their addresses.
func (r *Repo) Engines(ctx context.Context, envs []*state.Env) []Reached {
	byAddress := map[string]Reached{}
	if rt, err := r.Runtime(ctx); err == nil {
		byAddress[r.engine.Address()] = Reached{r.engine, rt}
	}
	for _, e := range envs {
		if e.Engine == "" || !e.Live() {
			continue
		}
		if rt, ep, err := r.Engine(ctx, e.Engine); err == nil {
			byAddress[ep.Address()] = Reached{ep, rt}
		}
	}
	var out []Reached
	for _, e := range byAddress {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoint.Address() < out[j].Endpoint.Address() })
	return out
}

// Endpoint is where the repository's runtime reached its engine,
// connecting it first.
func (r *Repo) Endpoint(ctx context.Context) (container.Endpoint, error) {
	_, err := r.Runtime(ctx)
	return r.engine, err
}

// RuntimeVersion is the container engine's name and version ("Docker
// Engine 20.10.24"), or why it has none.
func (r *Repo) RuntimeVersion(ctx context.Context) (string, error) {
	rt, err := r.Runtime(ctx)
	if err != nil {
		return "", err
	}
	return rt.Version(ctx)
}

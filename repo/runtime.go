package repo

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/policy"
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

// Runtime returns the container runtime, or why there is none.
func (r *Repo) Runtime(ctx context.Context) (container.Runtime, error) {
	if r.rt == nil && r.rtErr == nil {
		wait := time.Duration(policy.Default().Container.ConnectTimeout)
		if pol, err := r.Policy(); err == nil {
			wait = time.Duration(pol.Container.ConnectTimeout)
		}
		rt, ep, _, err := connect(ctx, wait)
		if err != nil {
			r.rtErr = fmt.Errorf("no container runtime answers (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
		} else {
			r.rt, r.engine = rt, ep
		}
	}
	return r.rt, r.rtErr
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

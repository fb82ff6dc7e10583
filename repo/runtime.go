package repo

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/policy"
)

// connect connects to the container engine and checks that it answers
// within wait.
func connect(ctx context.Context, wait time.Duration) (container.Runtime, string, error) {
	ep, err := container.FindEndpoint()
	if err != nil {
		return nil, "", err
	}
	rt, err := container.Connect(ep)
	if err != nil {
		return nil, "", err
	}
	pctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	version, err := rt.Version(pctx)
	if err != nil {
		rt.Close()
		if pctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("it did not answer within [container].connect_timeout (%s): %w", wait, err)
		}
		return nil, "", err
	}
	return rt, version, nil
}

// Runtime returns the container runtime, or why there is none.
func (r *Repo) Runtime(ctx context.Context) (container.Runtime, error) {
	if r.rt == nil && r.rtErr == nil {
		wait := time.Duration(policy.Default().Container.ConnectTimeout)
		if pol, err := r.Policy(); err == nil {
			wait = time.Duration(pol.Container.ConnectTimeout)
		}
		rt, _, err := connect(ctx, wait)
		if err != nil {
			r.rtErr = fmt.Errorf("no container runtime answers (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
		} else {
			r.rt = rt
		}
	}
	return r.rt, r.rtErr
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

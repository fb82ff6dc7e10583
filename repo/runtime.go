package repo

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/git-apex/git-apex/container"
)

// runtimeAnswer is how long git-apex waits for the engine to answer
// before counting it unreachable.
const runtimeAnswer = 3 * time.Second

// connect connects to the container engine and checks that it answers.
func connect(ctx context.Context) (container.Runtime, string, error) {
	rt, err := container.NewDockerRuntime()
	if err != nil {
		return nil, "", err
	}
	pctx, cancel := context.WithTimeout(ctx, runtimeAnswer)
	defer cancel()
	version, err := rt.Version(pctx)
	if err != nil {
		rt.Close()
		return nil, "", err
	}
	return rt, version, nil
}

// Runtime returns the container runtime, or why there is none.
func (r *Repo) Runtime(ctx context.Context) (container.Runtime, error) {
	if r.rt == nil && r.rtErr == nil {
		rt, _, err := connect(ctx)
		if err != nil {
			r.rtErr = fmt.Errorf("no container runtime answers (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
		} else {
			r.rt = rt
		}
	}
	return r.rt, r.rtErr
}

// RuntimeVersion is the container engine's version, or why it has none.
func (r *Repo) RuntimeVersion(ctx context.Context) (string, error) {
	rt, err := r.Runtime(ctx)
	if err != nil {
		return "", err
	}
	return rt.Version(ctx)
}

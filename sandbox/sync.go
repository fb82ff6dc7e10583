package sandbox

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/repo"
)

// Sync brings back what a full env's container made (its commits, and in
// copy mode its changed files) now, as after every exec: the retry when
// an exchange failed. The container must still be there.
func Sync(ctx context.Context, r *repo.Repo, identity string) (Result, error) {
	env, _, err := r.Resolve(ctx, identity)
	if err != nil {
		return Result{}, err
	}
	if !env.Contained() || env.Container == "" {
		return Result{}, exitcode.New(exitcode.Usage, "%s is a %s environment, with no container to bring anything back from", env.Identity, env.Mode)
	}
	if _, err := OfEnv(r, env).running(ctx, env.Container); err != nil {
		return Result{}, exitcode.New(exitcode.Runtime, "cannot sync %s: %v", env.Identity, err)
	}
	return BringBackEnv(ctx, r, nil, env)
}

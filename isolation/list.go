package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/state"
)

// List returns the envs, oldest first, after healing them against git;
// destroyed ones too when all is set.
func (m *Manager) List(ctx context.Context, all bool) ([]*state.Env, error) {
	envs, err := m.Store.Envs(ctx, all)
	if err != nil {
		return nil, err
	}
	worktrees, err := m.Git.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.healAll(ctx, envs, worktrees); err != nil {
		return nil, err
	}
	if all {
		return envs, nil
	}
	live := envs[:0]
	for _, env := range envs {
		if env.Live() {
			live = append(live, env)
		}
	}
	return live, nil
}

// Path returns the path of an identity's env. When the directory is
// gone it heals the record first (following a moved worktree).
func (m *Manager) Path(ctx context.Context, identity string) (string, error) {
	env, err := m.live(ctx, identity)
	if err != nil {
		return "", err
	}
	if exists(env.Path) {
		return env.Path, nil
	}
	worktrees, err := m.Git.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	if err := m.healAll(ctx, []*state.Env{env}, worktrees); err != nil {
		return "", err
	}
	if !env.Live() {
		return "", exitcode.New(exitcode.NotFound, "no environment for %s: its worktree was deleted; `git apex start %s` makes it again", identity, identity)
	}
	return env.Path, nil
}

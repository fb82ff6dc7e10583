package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/state"
)

// Listed is an env with the links that resolve to it.
type Listed struct {
	Env   *state.Env
	Links []state.Link
}

// List returns the envs with their links, oldest first, after healing
// them against git; destroyed ones too when all is set.
func (m *Manager) List(ctx context.Context, all bool) ([]Listed, error) {
	envs, err := m.Store.Envs(ctx, all)
	if err != nil {
		return nil, err
	}
	worktrees, err := m.Git.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	if err := m.healAll(ctx, nil, envs, worktrees); err != nil {
		return nil, err
	}
	links, err := m.Store.Links(ctx)
	if err != nil {
		return nil, err
	}
	var listed []Listed
	for _, env := range envs {
		if all || env.Live() {
			listed = append(listed, Listed{Env: env, Links: links[env.ID]})
		}
	}
	return listed, nil
}

// Path returns the path of an identity's env. When the directory is
// gone it heals the record first (following a moved worktree).
func (m *Manager) Path(ctx context.Context, identity string) (string, error) {
	env, _, err := m.resolve(ctx, identity)
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
	if err := m.healAll(ctx, nil, []*state.Env{env}, worktrees); err != nil {
		return "", err
	}
	if !env.Live() {
		return "", exitcode.New(exitcode.NotFound, "no environment for %s: its worktree was deleted; `git apex start %s` makes it again", identity, identity)
	}
	return env.Path, nil
}

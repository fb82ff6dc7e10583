package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/state"
)

// Path returns the path of an identity's env. When the directory is
// gone it heals the record first (following a moved worktree).
func (m *Manager) Path(ctx context.Context, identity string) (string, error) {
	env, _, err := m.r.Resolve(ctx, identity)
	if err != nil {
		return "", err
	}
	if hostpath.Exists(env.Path) {
		return env.Path, nil
	}
	worktrees, err := m.r.Git.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	if _, err := heal.All(ctx, m.r, nil, []*state.Env{env}, worktrees); err != nil {
		return "", err
	}
	if !env.Live() {
		return "", exitcode.New(exitcode.NotFound, "no environment for %s: its worktree was deleted; `git apex start %s` makes it again", identity, identity)
	}
	return env.Path, nil
}

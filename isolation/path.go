package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/state"
)

// Path returns the path of an identity's env. When the directory is
// gone it heals the record first (following a worktree git knows was
// moved); one git cannot find is not found (exit 7), and nothing of it
// is changed (heal.All).
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
	missing, err := heal.All(ctx, m.r, nil, []*state.Env{env}, worktrees)
	if err != nil {
		return "", err
	}
	if why, ok := missing[env.ID]; ok {
		return "", exitcode.New(exitcode.NotFound, "no directory for %s: %s", identity, why)
	}
	if !env.Live() {
		return "", exitcode.New(exitcode.NotFound, "no environment for %s: its worktree was deleted; `git apex start %s` makes it again", identity, identity)
	}
	return env.Path, nil
}

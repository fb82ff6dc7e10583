// Package isolation is the lifecycle of one env: start (planned from the
// policy, checked against git, made by the provider of its mode: full, a
// worktree with a container and a private git directory; worktree;
// shared), path, list, link and unlink, close and finish, exec, and
// remove. It works on an opened repository (repo); takes slots from pool;
// leaves a full env's container and its git to sandbox, the policy's
// commands and copies to setup, and the repair of drift to heal; and runs
// host commands only through hostexec. Sweeps over many envs (sweep)
// build on it; it imports none of them.
package isolation

import (
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
)

// Manager makes, finds and removes the envs of an opened repository.
type Manager struct {
	r    *repo.Repo
	pool *pool.Pool
}

// New is the manager of an opened repository's envs.
func New(r *repo.Repo) *Manager {
	return &Manager{r: r, pool: pool.New(r)}
}

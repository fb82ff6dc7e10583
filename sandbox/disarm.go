package sandbox

import (
	"sort"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// Disarmed is what Disarm changed in a worktree, by path relative to it.
type Disarmed struct {
	Cleared []string // files whose set-user-id or set-group-id bit it cleared
	Opened  []string // directories of the user's it gave back read, enter and write rights to
	Closed  []string // directories it could not enter (another user's, closed to this one)
	// Foreign are the directories another user owns (root, for a
	// container run as root), which this user, not root, cannot empty.
	Foreign []string
}

// Disarm makes what a container wrote in its mounted worktree harmless on
// the host, after each exec, shell and batch task and before a removal:
// a file the container made set-user-id or set-group-id (`chmod 4755`) is
// one any host user could run as its owner, so those bits are cleared
// everywhere in the worktree. With open it also gives the user back the
// directories of theirs that the container closed (`chmod 0`), so that a
// removal can delete them. It walks the whole worktree, never following a
// link. In copy mode the files are the host's own writes (never set-id),
// and nothing is done.
func (s *Sandbox) Disarm(open bool) (Disarmed, error) {
	if s.Copied() || !gitx.Exists(s.worktree) {
		return Disarmed{}, nil
	}
	return disarm(s.worktree, open)
}

// DisarmEnv is Disarm for a full env's worktree, with what it cleared
// said as a warning: a set-id file is the container's doing.
func DisarmEnv(r *repo.Repo, env *state.Env, open bool) (Disarmed, error) {
	if !env.Contained() || !env.Live() {
		return Disarmed{}, nil
	}
	d, err := OfEnv(r, env).Disarm(open)
	if len(d.Cleared) > 0 {
		sort.Strings(d.Cleared)
		r.Warnf("%s: cleared the set-user-id and set-group-id bits its container put on %s", env.Identity, strings.Join(d.Cleared, ", "))
	}
	return d, err
}

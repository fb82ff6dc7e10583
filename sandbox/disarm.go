package sandbox

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// Disarmed is what Disarm changed in a worktree, by path relative to it.
type Disarmed struct {
	Cleared []string // files whose set-user-id or set-group-id bit it cleared
	Opened  []string // directories of the user's it gave back read, enter and write rights to
	Closed  []string // directories it could not enter (another user's, closed to this one)
	// Foreign are the directories another user owns (root, for a
	// container run as root) that this user, not root, cannot empty:
	// not empty, and not open to this user's writes.
	Foreign []string
	// GitDirs are what git would take for a git directory, in any
	// directory below the top: a .git entry of any type (a FIFO too),
	// and a directory holding HEAD, objects and refs (planted.AfterExec).
	GitDirs []string
}

// Disarm makes what a container wrote in the worktree it had mounted at
// dir harmless on the host, after each exec, shell and batch task and
// before a removal: a file the container made set-user-id or
// set-group-id (`chmod 4755`) is one any host user could run as its
// owner, so those bits are cleared everywhere in the worktree. With open
// it also gives the user back the directories of theirs that the
// container closed (`chmod 0`), so that a removal can delete them. It
// walks the whole worktree, never following a link, and on the way notes
// what git would take for a git directory. A copy-mode
// container's worktree needs none of it: its files are the host's own
// writes, never set-id.
func Disarm(dir string, open bool) (Disarmed, error) {
	if !hostpath.Exists(dir) {
		return Disarmed{}, nil
	}
	return disarm(dir, open)
}

// DisarmEnv is Disarm for a full env's worktree, with what it cleared
// said as a warning: a set-id file is the container's doing.
func DisarmEnv(r *repo.Repo, env *state.Env, open bool) (Disarmed, error) {
	if !env.Contained() || !env.Live() {
		return Disarmed{}, nil
	}
	if OfEnv(r, env).Copied() {
		return Disarmed{}, nil
	}
	d, err := Disarm(env.Path, open)
	if len(d.Cleared) > 0 {
		names := make([]string, len(d.Cleared))
		for i, p := range d.Cleared {
			names[i] = strconv.Quote(p)
		}
		sort.Strings(names)
		r.Warnf("%s: cleared the set-user-id and set-group-id bits its container put on %s", env.Identity, strings.Join(names, ", "))
	}
	return d, err
}

// CheckRemovable is the check of a full env's worktree before a removal
// changes anything: it refuses (exit 3) when its container left
// directories another user owns (root's, from a container run as root)
// that this user cannot empty. It opens nothing: the container still
// runs, and could close what it opened.
func CheckRemovable(r *repo.Repo, env *state.Env) error {
	d, err := DisarmEnv(r, env, false)
	if err != nil {
		return err
	}
	return stuck(env, d.Foreign)
}

// DisarmForRemoval stops a full env's container whose worktree is
// mounted, so that no process of it races what follows (a `chmod 0`
// loop, a directory swapped for a link), then disarms the worktree,
// opening the user's closed directories when forced, and refuses (exit
// 3) as CheckRemovable does, closed directories that could not be
// opened counted when forced. A stopped container starts again on the
// env's next use, so a refusal loses nothing. A container its engine
// cannot stop (the engine does not answer: a forced removal goes on
// without it) is warned of.
func DisarmForRemoval(ctx context.Context, r *repo.Repo, env *state.Env, force bool) error {
	if !env.Contained() || !env.Live() || OfEnv(r, env).Copied() {
		return nil
	}
	if env.Container != "" {
		eng, err := OfEnv(r, env).on(ctx)
		if err == nil {
			err = eng.Runtime.Stop(ctx, env.Container)
		}
		if err != nil {
			r.Warnf("%s: cannot stop its container before its worktree is removed: %v", env.Identity, err)
		}
	}
	d, err := DisarmEnv(r, env, force)
	if err != nil {
		return err
	}
	if force {
		return stuck(env, append(d.Foreign, d.Closed...))
	}
	return stuck(env, d.Foreign)
}

// stuck is the refusal of a removal of env whose worktree holds paths
// (relative to it) that this user cannot delete; nil when there are none.
// It names no rm to paste: until git-apex stops the container, a path
// printed can be swapped for a link that leads out of the worktree before
// the command runs. Root's git-apex stops the container and deletes them
// with the rest.
func stuck(env *state.Env, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strconv.Quote(filepath.Join(env.Path, p))
	}
	return exitcode.New(exitcode.Refused, "cannot remove %s: its container left what this user cannot delete (another user's directories, or closed ones): %s; run `git apex remove --force %s` as root, which stops the container and removes them with the rest",
		env.Identity, strings.Join(names, ", "), env.Identity)
}

package sandbox

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/planted"
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

// DisarmForRemoval is DisarmEnv before a removal, opening the user's
// closed directories when forced, and refuses (exit 3, before anything
// is removed) naming what its container left that this user cannot
// delete: another user's directories (root's, from a container run as
// root), and closed ones that could not be opened.
func DisarmForRemoval(r *repo.Repo, env *state.Env, force bool) error {
	d, err := DisarmEnv(r, env, force)
	if err != nil {
		return err
	}
	stuck := d.Foreign
	if force {
		stuck = append(stuck, d.Closed...)
	}
	if len(stuck) == 0 {
		return nil
	}
	names, cmds := make([]string, len(stuck)), make([]string, len(stuck))
	for i, p := range stuck {
		names[i], cmds[i] = strconv.Quote(filepath.Join(env.Path, p)), planted.RemoveCommand(env.Path, p)
		if cmds[i] == "" {
			cmds = nil // a name with control characters: no command to paste
			break
		}
	}
	how := "delete them as root"
	if cmds != nil {
		how = fmt.Sprintf("delete them as root (`sudo %s`)", strings.Join(cmds, "; sudo "))
	}
	return exitcode.New(exitcode.Refused, "cannot remove %s: its container left what this user cannot delete (another user's directories, or closed ones): %s; %s, then run `git apex remove --force %s`",
		env.Identity, strings.Join(names, ", "), how, env.Identity)
}

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/disarm"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/planted"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// DisarmEnv is disarm.Tree for a full env's worktree, with what it
// cleared said as a warning: a set-id file is the container's doing. On
// a rootless engine, what the container left owned by another of its
// users is given back to the user first (reclaim), so that its set-id
// bits can be cleared and a removal can delete it.
func DisarmEnv(ctx context.Context, r *repo.Repo, env *state.Env, open bool) (disarm.Result, error) {
	if !env.Contained() || !env.Live() {
		return disarm.Result{}, nil
	}
	if OfEnv(r, env).Copied() {
		return disarm.Result{}, nil
	}
	d, err := disarm.Tree(env.Path, open)
	if err == nil && len(d.Others) > 0 {
		if done, rerr := reclaim(ctx, r, env, d.Others); rerr != nil {
			r.Warnf("%s: cannot give back what its container left owned by another user: %v", env.Identity, rerr)
		} else if done {
			stuck := d.Stuck // chown cleared their bits
			d, err = disarm.Tree(env.Path, open)
			d.Cleared = append(d.Cleared, stuck...)
		}
	}
	if len(d.Cleared) > 0 {
		r.Warnf("%s: cleared the set-user-id and set-group-id bits its container put on %s", env.Identity, quoted(d.Cleared))
	}
	if len(d.Stuck) > 0 {
		r.Warnf("%s: cannot clear the set-user-id and set-group-id bits its container put on %s: another user owns them", env.Identity, quoted(d.Stuck))
	}
	return d, err
}

// quoted is paths quoted, sorted and joined with commas.
func quoted(paths []string) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = strconv.Quote(p)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// reclaim gives paths (relative to the env's worktree) back to the user
// when the env's container runs on a rootless engine: there another
// container user is one of the user's subordinate ids, whose files the
// user can neither change nor delete, and the container's root is the
// user, so `chown -R -h 0:0` run there as root makes them the user's
// (and clears their set-id bits). It says whether it did; on another
// engine it does nothing. The command is the container's, so it is
// bounded like every read from it.
func reclaim(ctx context.Context, r *repo.Repo, env *state.Env, paths []string) (bool, error) {
	s := OfEnv(r, env)
	eng, err := s.on(ctx)
	if err != nil || !eng.Endpoint.Rootless() {
		return false, err
	}
	rt, err := s.running(ctx, env.Container)
	if err != nil {
		return false, err
	}
	argv := []string{"chown", "-R", "-h", "0:0", "--"}
	for _, p := range paths {
		argv = append(argv, filepath.Join(env.Path, p))
	}
	c := policyOf(r).Container
	rctx, cancel := context.WithTimeout(ctx, time.Duration(c.ExchangeTimeout))
	defer cancel()
	var out bytes.Buffer
	code, err := rt.Exec(rctx, env.Container, container.ExecSpec{Cmd: argv, WorkDir: env.Path, User: "0:0",
		Stdout: container.Limit(&out, 4096, ""), Stderr: container.Limit(&out, 4096, "")})
	if err == nil && code != 0 {
		err = fmt.Errorf("chown there: exit status %d: %s", code, strings.TrimSpace(out.String()))
	}
	if err != nil {
		return false, readError(ctx, rctx, c, err)
	}
	return true, nil
}

// DisarmForRemoval is DisarmEnv before a removal, opening the user's
// closed directories when forced, and refuses (exit 3, before anything
// is removed) naming what its container left that this user cannot
// delete: another user's directories (root's, from a container run as
// root), and closed ones that could not be opened.
func DisarmForRemoval(ctx context.Context, r *repo.Repo, env *state.Env, force bool) error {
	d, err := DisarmEnv(ctx, r, env, force)
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

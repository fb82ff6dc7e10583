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

// CheckRemovable is the check of a full env's worktree before a removal
// changes anything: it refuses (exit 3) when its container left
// directories another user owns (root's, from a container run as root)
// that this user cannot empty. It opens nothing: the container still
// runs, and could close what it opened.
func CheckRemovable(ctx context.Context, r *repo.Repo, env *state.Env) error {
	d, err := DisarmEnv(ctx, r, env, false)
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
	stop := func() {
		if env.Container == "" {
			return
		}
		eng, err := OfEnv(r, env).on(ctx)
		if err == nil {
			err = eng.Runtime.Stop(ctx, env.Container)
		}
		if err != nil {
			r.Warnf("%s: cannot stop its container before its worktree is removed: %v", env.Identity, err)
		}
	}
	stop()
	d, err := DisarmEnv(ctx, r, env, force)
	stop() // on a rootless engine, DisarmEnv's reclaim started it again
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

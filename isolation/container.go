package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// containerProvider gives each env a worktree and a container with it
// mounted, working in a sandbox (see the sandbox package).
type containerProvider struct {
	r *repo.Repo
}

// errContainer marks a failure to make the container (not the worktree):
// create falls back to the worktree alone unless strict.
type errContainer struct{ err error }

func (e errContainer) Error() string { return e.err.Error() }
func (e errContainer) Unwrap() error { return e.err }

func (c containerProvider) create(ctx context.Context, lk *gitx.Locked, p *plan, t target) (made, error) {
	tree, err := worktreeProvider{}.create(ctx, lk, p, t)
	if err != nil {
		return tree, err
	}
	s := sandbox.For(c.r, p.id.String(), t.path, p.branch).WithPorts(p.port)
	undoSandbox := func(context.Context) error { return os.RemoveAll(s.Dir()) }
	if err := s.Make(ctx, t.start, p.policy); err != nil {
		return made{undo: undoAll(tree.undo, undoSandbox)}, errContainer{fmt.Errorf("cannot make its private git directory: %w", err)}
	}
	id, err := s.MakeContainer(ctx, p.policy)
	if err != nil {
		return made{undo: undoAll(tree.undo, undoSandbox)}, errContainer{err}
	}
	rt, err := c.r.Runtime(ctx) // MakeContainer connected it
	undoContainer := func(ctx context.Context) error { return rt.Remove(ctx, id) }
	ep, _ := c.r.Endpoint(ctx)
	return made{undo: undoAll(tree.undo, undoSandbox, undoContainer), container: id, engine: ep.Record()}, err
}

// remove deletes the worktree, then the container and the sandbox. The
// caller has brought the container's commits back first (sandbox.BringBackEnv).
func (c containerProvider) remove(ctx context.Context, lk *gitx.Locked, env *state.Env) error {
	if err := (worktreeProvider{}).remove(ctx, lk, env); err != nil {
		return err
	}
	sandboxDir := sandbox.OfEnv(c.r, env).Dir()
	if env.Container == "" {
		return os.RemoveAll(sandboxDir)
	}
	rt, ep, err := c.r.Engine(ctx, env.Engine)
	if err != nil {
		c.r.Warnf("%s: its container %s was not removed: %v; remove it with `%s rm -f %s`", env.Identity, repo.Short(env.Container), err, ep.CLI(), repo.Short(env.Container))
		return os.RemoveAll(sandboxDir)
	}
	return errors.Join(rt.Remove(ctx, env.Container), os.RemoveAll(sandboxDir))
}

// strictFull is the error of a strict full start that cannot have its
// container.
func strictFull(id policy.Identity, reason string) error {
	return exitcode.New(exitcode.Runtime, "cannot start %s in full isolation: %s; strict mode forbids falling back", id, reason)
}

// isContainerError reports whether err is a failure of the container part.
func isContainerError(err error) bool {
	var ce errContainer
	return errors.As(err, &ce)
}

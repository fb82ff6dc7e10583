package envexec

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/planted"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// InContainer runs spec in a full env's container, the one way anything
// runs there: the commits the host made since the last exchange are sent over
// first; after it, the set-id bits it put on files are cleared (see
// sandbox.DisarmEnv) and what it made comes back to the env's branch
// (see sandbox.BringBackEnv), even when it was interrupted. Without lk,
// nothing runs (exit 3) while the host's commits hold submodules whose
// directories its mounted worktree leaves writable (see
// sandbox.Sandbox.SendOver). Without lk
// the container is started if it stopped and made again if it was
// deleted (see sandbox.Running);
// a caller holding the repository lock (lk, a removal) only gets it
// started, and an error when it is gone. An error says the command could
// not run; otherwise its exit code is returned.
func InContainer(ctx context.Context, r *repo.Repo, lk *gitx.Locked, env *state.Env, spec container.ExecSpec) (int, error) {
	var rt container.Runtime
	id, err := env.Container, error(nil)
	if lk == nil {
		rt, id, err = sandbox.Running(ctx, r, env)
	} else {
		rt, err = sandbox.Started(ctx, r, env)
	}
	if err != nil {
		return -1, err
	}
	if err := sandbox.OfEnv(r, env).SendOver(ctx, rt, id); lk == nil && exitcode.Of(err) == exitcode.Refused {
		return -1, fmt.Errorf("%s: %w", env.Identity, err) // submodule directories it could write: see sandbox.SendOver
	} else if err != nil {
		r.Warnf("%s: %v", env.Identity, err)
	}
	code, err := rt.Exec(ctx, id, spec)
	if d, derr := sandbox.DisarmEnv(ctx, r, env, false); derr != nil {
		r.Warnf("%s: cannot check its worktree for set-id files: %v", env.Identity, derr)
	} else if s := sandbox.OfEnv(r, env); !s.Copied() { // a copied env's exchange checks its files
		planted.AfterExec(ctx, r, env, s.Dir(), d.GitDirs)
	}
	bctx, stop := exchangeContext(ctx)
	defer stop()
	if _, berr := sandbox.BringBackEnv(bctx, r, lk, env); berr != nil {
		r.Warnf("%s: %v; it stays in the container: `git apex sync %s` retries, and so does the next exec", env.Identity, berr, env.Identity)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // interrupted during the exchange
	}
	return code, err
}

// Commands returns how the policy's commands for a full env run (its
// setup commands, post_create and pre_remove hooks): argv in dir inside
// its container, as the container's user, with the env's APEX_*
// variables, through InContainer (lk as there). Nothing in a full env's
// worktree ever runs on the host: the container can write there. It
// returns nil for any other env, whose commands run on the host.
func Commands(r *repo.Repo, lk *gitx.Locked, env *state.Env) func(ctx context.Context, env *state.Env, dir string, argv []string, out io.Writer) (int, error) {
	if !env.Contained() {
		return nil
	}
	return func(ctx context.Context, env *state.Env, dir string, argv []string, out io.Writer) (int, error) {
		return InContainer(ctx, r, lk, env, container.ExecSpec{Cmd: argv, WorkDir: dir, Env: env.Vars(), Stdout: out, Stderr: out})
	}
}

// Files returns how the files that a start copies into a full env's
// worktree on the host ([worktree].copy) reach its container: in copy
// mode, as sandbox.Sandbox.CopyFiles gives them; a mounted worktree has
// them already. It returns nil for any other env.
func Files(r *repo.Repo, env *state.Env) func(ctx context.Context, paths []string) error {
	if !env.Contained() {
		return nil
	}
	return func(ctx context.Context, paths []string) error {
		pol, err := r.Policy()
		if err != nil {
			return err
		}
		return sandbox.OfEnv(r, env).CopyFiles(ctx, env.Container, paths, pol)
	}
}

// exchangeContext is the context of the exchange after a command: ctx,
// so that an interrupt stops it; or when the interrupt already stopped
// the command, a new one that the next SIGINT or SIGTERM ends. Either way
// each read from the container is bounded ([container].exchange_timeout).
func exchangeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return signal.NotifyContext(context.WithoutCancel(ctx), os.Interrupt, syscall.SIGTERM)
}

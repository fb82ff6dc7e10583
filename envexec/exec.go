// Package envexec runs commands in environments: inside a full env's
// container, with its commits exchanged before and after, or in the
// worktree on the host.
package envexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/setup"
	"github.com/git-apex/git-apex/state"
)

// Request is a command to run in an env.
type Request struct {
	Identity string
	Cmd      []string // nil: an interactive shell
	TTY      bool     // give a full env's command a terminal, relaying Stdin's (raw while it runs)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Env      []string // NAME=value pairs it gets beside the env's APEX_* ones
	// Background runs a worktree env's command in a process group of its
	// own, stopped with SIGTERM and then, after Grace (0:
	// hostexec.DefaultGrace), SIGKILL when ctx ends; otherwise it stays in
	// the terminal's foreground group and an interrupt reaches it as SIGINT.
	Background bool
	Grace      time.Duration
	// Host runs the command on the host, in the worktree, even in a full
	// env (an editor, which needs the host's display and files).
	Host bool
}

// Exec runs a command in an env: inside its container for a full env
// (starting the container if it stopped, making it again if it was
// deleted), in its worktree otherwise. It returns the command's exit code.
// In a full env, commits made on the host since the last exchange reach
// the container's private git directory first, and the commits the
// command made come back to the env's branch after it, even when it was
// interrupted (see sandbox.Sandbox.BringBack); set-id bits the container
// put on files are cleared (disarm.Tree).
func Exec(ctx context.Context, rp *repo.Repo, r Request) (int, error) {
	env, _, err := rp.Resolve(ctx, r.Identity)
	if err != nil {
		return -1, err
	}
	if !hostpath.Exists(env.Path) {
		return -1, exitcode.New(exitcode.NotFound, "cannot run in %s: its worktree %s is gone; `git apex start %s` makes it again", env.Identity, env.Path, env.Identity)
	}
	// A program on the host (an editor, --host) would run git there too:
	// a full env's .git file is checked before anything runs.
	if err := heal.CheckGitfile(rp, env); err != nil {
		return -1, err
	}
	cmd := r.Cmd
	if env.Mode != string(policy.Full) || r.Host {
		if cmd == nil {
			cmd = []string{os.Getenv("SHELL")}
			if cmd[0] == "" {
				cmd[0] = "/bin/sh"
			}
		}
		code, err := runLocal(ctx, env, cmd, r)
		if code == -1 { // it never started
			err = startError(err, cmd[0], env.Identity)
		}
		return code, err
	}
	if cmd == nil {
		pol, err := rp.Policy()
		if err != nil {
			return -1, err
		}
		cmd = []string{pol.Container.Shell}
	}
	spec := container.ExecSpec{Cmd: cmd, WorkDir: env.Path, TTY: r.TTY, Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr,
		Env: append(env.Vars(), r.Env...)}
	if r.TTY {
		spec.Env = append(spec.Env, "TERM="+os.Getenv("TERM"))
	}
	code, err := InContainer(ctx, rp, nil, env, spec)
	if errors.As(err, new(*container.StartError)) {
		err = startError(err, cmd[0], env.Identity)
	}
	return code, err
}

// startError is the error of a command that could not start, the same in
// every mode: exit 127 when there is no such command (as a shell's
// "command not found"), 126 when it is there but cannot be run; else err.
func startError(err error, name, identity string) error {
	switch {
	case errors.Is(err, hostexec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return exitcode.New(exitcode.CommandNotFound, "cannot run %s in %s: no such command (not found in the PATH there)", name, identity)
	case errors.Is(err, fs.ErrPermission):
		return exitcode.New(exitcode.CannotExecute, "cannot run %s in %s: permission denied (it is not an executable file there)", name, identity)
	}
	return err
}

// runLocal runs a command in the env's directory on the host, in the
// foreground (it may be an interactive shell; an interrupt reaches it as
// SIGINT) or, when r.Background, in a process group of its own. It is
// killed if it lingers.
func runLocal(ctx context.Context, env *state.Env, argv []string, r Request) (int, error) {
	c := hostexec.Command{Argv: argv, Dir: env.Path, Env: append(setup.CommandEnv(env), r.Env...),
		Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, Foreground: !r.Background, Grace: r.Grace}
	if !r.Background {
		c.Stop = syscall.SIGINT
	}
	code, err := hostexec.Run(ctx, c)
	if err != nil && ctx.Err() == nil {
		return -1, fmt.Errorf("cannot run %s in %s: %w", argv[0], env.Identity, err)
	}
	return code, err
}

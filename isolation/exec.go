package isolation

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// ExecRequest is a command to run in an env.
type ExecRequest struct {
	Identity string
	Cmd      []string // nil: an interactive shell
	TTY      bool     // give it a terminal (the caller's must be in raw mode)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// Exec runs a command in an env: inside its container for a full env
// (starting the container if it stopped, making it again if it was
// deleted), in its worktree otherwise. It returns the command's exit code.
// In a full env, commits made on the host since the last exchange reach
// the container's private git directory first, and the commits the
// command made come back to the env's branch after it, even when it was
// interrupted (see bringBack).
func (m *Manager) Exec(ctx context.Context, r ExecRequest) (int, error) {
	env, _, err := m.resolve(ctx, r.Identity)
	if err != nil {
		return -1, err
	}
	if !exists(env.Path) {
		return -1, exitcode.New(exitcode.NotFound, "cannot run in %s: its worktree %s is gone; `git apex start %s` makes it again", env.Identity, env.Path, env.Identity)
	}
	cmd := r.Cmd
	if env.Mode != string(policy.Full) {
		if cmd == nil {
			cmd = []string{os.Getenv("SHELL")}
			if cmd[0] == "" {
				cmd[0] = "/bin/sh"
			}
		}
		return runLocal(ctx, env, cmd, r)
	}
	if problem := m.Git.GitfileProblem(env.Path); problem != "" {
		return -1, gitfileRefusal(env, problem)
	}
	id, err := m.ensureContainer(ctx, env)
	if err != nil {
		return -1, err
	}
	if cmd == nil {
		pol, err := m.Policy()
		if err != nil {
			return -1, err
		}
		cmd = []string{pol.Container.Shell}
	}
	spec := container.ExecSpec{Cmd: cmd, WorkDir: env.Path, TTY: r.TTY, Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr,
		Env: ApexVars(env)}
	if r.TTY {
		spec.Env = append(spec.Env, "TERM="+os.Getenv("TERM"))
	}
	if err := m.sendOver(ctx, m.rt, id, m.envSandbox(env)); err != nil {
		m.warnf("%s: %v", env.Identity, err)
	}
	code, err := m.rt.Exec(ctx, id, spec)
	if _, berr := m.bringBackEnv(context.WithoutCancel(ctx), nil, env); berr != nil {
		m.warnf("%s: %v; they stay in the container and come back at the next exec", env.Identity, berr)
	}
	return code, err
}

// runLocal runs a command in the env's directory on the host, in the
// foreground (it may be an interactive shell). An interrupt reaches it as
// SIGINT; it is killed if it lingers.
func runLocal(ctx context.Context, env *state.Env, argv []string, r ExecRequest) (int, error) {
	code, err := hostexec.Run(ctx, hostexec.Command{Argv: argv, Dir: env.Path, Env: commandEnv(env),
		Stdin: r.Stdin, Stdout: r.Stdout, Stderr: r.Stderr, Foreground: true, Stop: syscall.SIGINT})
	if err != nil && ctx.Err() == nil {
		return -1, fmt.Errorf("cannot run %s in %s: %w", argv[0], env.Identity, err)
	}
	return code, err
}

// ensureContainer returns a running container for a full env: it starts
// one that stopped and, under the repository lock, makes one that was
// deleted by hand, or that an earlier git-apex made with the old layout,
// again.
func (m *Manager) ensureContainer(ctx context.Context, env *state.Env) (string, error) {
	rt, err := m.runtime(ctx)
	if err != nil {
		return "", exitcode.New(exitcode.Runtime, "cannot run in %s: %v", env.Identity, err)
	}
	info, err := rt.Inspect(ctx, env.Container)
	if err != nil {
		return "", err
	}
	switch {
	case info.State == "missing" || info.Labels[labelLayout] != layout:
	case info.State == "running":
		return env.Container, nil
	default:
		if err := rt.Start(ctx, env.Container); err != nil {
			return "", fmt.Errorf("cannot start the container of %s: %w", env.Identity, err)
		}
		return env.Container, nil
	}
	lk, err := m.lock(ctx)
	if err != nil {
		return "", err
	}
	defer lk.Unlock()
	fresh, err := m.Store.Live(ctx, env.Identity)
	if err != nil {
		return "", err
	}
	if fresh != nil && fresh.Container != env.Container {
		env.Container = fresh.Container // made again meanwhile: the exchange after the command uses it
		return fresh.Container, nil
	}
	return m.remakeContainer(ctx, env)
}

// remakeContainer makes a full env's container again, over its sandbox
// (made at the host's tip when it has none), and records it. A container
// still there (one with the old layout) is removed first. The caller
// holds the repository lock.
func (m *Manager) remakeContainer(ctx context.Context, env *state.Env) (string, error) {
	pol, err := m.Policy()
	if err != nil {
		return "", err
	}
	rt, err := m.runtime(ctx)
	if err != nil {
		return "", exitcode.New(exitcode.Runtime, "cannot make the container of %s again: %v", env.Identity, err)
	}
	s := m.envSandbox(env)
	tip, err := m.hostTip(ctx, s)
	if err == nil && !s.exists() {
		err = m.makeSandbox(ctx, s, tip, containerUser(pol))
	} else if err == nil {
		err = m.protectGitlinks(ctx, s, tip)
	}
	if err != nil {
		return "", fmt.Errorf("cannot make the private git directory of %s: %w", env.Identity, err)
	}
	old := env.Container
	why := "was gone"
	if info, err := rt.Inspect(ctx, old); err == nil && info.State != "missing" {
		why = "had the old layout, which mounted the repository's git directory"
		if err := rt.Remove(ctx, old); err != nil {
			return "", err
		}
	}
	id, err := m.makeContainer(ctx, s, env.Identity, pol)
	if err != nil {
		return "", exitcode.New(exitcode.Runtime, "cannot make the container of %s again: %v", env.Identity, err)
	}
	env.Container = id
	if err := m.Store.Save(ctx, env, "recreated", "container "+short(old)+" "+why+"; made "+short(id)); err != nil {
		return "", err
	}
	m.notef("%s: its container %s; made it again", env.Identity, why)
	return id, nil
}

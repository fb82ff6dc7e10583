package setup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// CommandError is a policy command (setup or a lifecycle hook) that failed.
type CommandError struct {
	Key     string // where the policy sets it, e.g. "worktree.setup"
	Command string
	Status  int    // exit status; -1 when it could not run
	Tail    string // the end of its output
	Err     error  // why it could not run, when it could not
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("%s command `%s` exited with status %d", e.Key, e.Command, e.Status)
	if e.Err != nil {
		msg = fmt.Sprintf("%s command `%s` could not run: %v", e.Key, e.Command, e.Err)
	}
	if e.Tail != "" {
		msg += "; its output ended with:\n" + e.Tail
	}
	return msg
}

// ExitCode reports a failed policy command as an unexpected failure.
func (e *CommandError) ExitCode() int { return exitcode.Failure }

// Unwrap returns why the command could not run, if it could not.
func (e *CommandError) Unwrap() error { return e.Err }

// CommandEnv is the environment of a command run on the host for an
// env: nothing is ever substituted into a command string, it sees the env
// only through its Vars.
func CommandEnv(env *state.Env) []string {
	return append(gitx.CleanEnv(), env.Vars()...)
}

// Runner runs argv in dir for env, with the env's APEX_* variables and
// its output to out, and returns its exit status; an error says it could
// not run. nil runs it on the host, through hostexec, with CommandEnv.
type Runner func(ctx context.Context, env *state.Env, dir string, argv []string, out io.Writer) (int, error)

// Run runs each command as `sh -c <command>` in dir, in order, through
// run (nil: on the host), streaming its output to stderr, and stops at
// the first that fails.
func Run(ctx context.Context, r *repo.Repo, env *state.Env, dir, key string, commands []string, run Runner) error {
	if run == nil {
		run = func(ctx context.Context, env *state.Env, dir string, argv []string, out io.Writer) (int, error) {
			return hostexec.Run(ctx, hostexec.Command{Argv: argv, Dir: dir, Env: CommandEnv(env), Stdout: out, Stderr: out})
		}
	}
	for _, command := range commands {
		r.Notef("%s: running %s: %s", env.Identity, key, command)
		tail := &tailBuffer{max: 2048}
		status, err := run(ctx, env, dir, []string{"sh", "-c", command}, io.MultiWriter(r.Stderr(), tail))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || status != 0 {
			return &CommandError{Key: key, Command: command, Status: status, Tail: tail.String(), Err: err}
		}
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if extra := t.buf.Len() - t.max; extra > 0 {
		t.buf.Next(extra)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	return strings.TrimRight(t.buf.String(), "\n")
}

// RemoveHooks returns the lifecycle hooks a removal runs: none when the
// policy's commands are not approved (with a warning when it has some),
// and no pre_remove for an env on the host (not full) when they were
// approved in containers only (with a warning). post_remove runs in the
// main checkout, on the host, for every env, as approved.
// An invalid policy stops the removal, since its hooks cannot be known,
// unless force.
func RemoveHooks(r *repo.Repo, env *state.Env, force bool) (policy.Hooks, error) {
	pol, err := r.Policy()
	if err != nil {
		if !force {
			return policy.Hooks{}, fmt.Errorf("%w; its pre_remove hooks cannot be known: fix it, or run `git apex remove --force %s`", err, env.Identity)
		}
		r.Warnf("%v; removing without its hooks (--force)", err)
		return policy.Hooks{}, nil
	}
	hooks := policy.Hooks{PreRemove: pol.Hooks.PreRemove, PostRemove: pol.Hooks.PostRemove}
	if len(hooks.PreRemove)+len(hooks.PostRemove) == 0 {
		return hooks, nil
	}
	trusted, host, err := r.Trusted(pol)
	if err != nil || !trusted {
		if err == nil {
			r.WarnUntrusted(host)
		}
		return policy.Hooks{}, err
	}
	if len(hooks.PreRemove) > 0 && !env.Contained() {
		onHost, _, err := r.TrustedOnHost(pol)
		if err != nil {
			return policy.Hooks{}, err
		}
		if !onHost { // approved in containers only: not here, on the host
			pending := make([]string, len(hooks.PreRemove))
			for i, command := range hooks.PreRemove {
				pending[i] = "hooks.pre_remove: " + command
			}
			r.WarnNotOnHost(env, pending)
			hooks.PreRemove = nil
		}
	}
	return hooks, nil
}

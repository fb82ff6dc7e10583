package isolation

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
	"github.com/git-apex/git-apex/state"
)

// CommandError is a policy command (setup or a lifecycle hook) that failed.
type CommandError struct {
	Key     string // where the policy sets it, e.g. "worktree.setup"
	Command string
	Status  int    // exit status; -1 when it could not run
	Tail    string // the end of its output
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("%s command `%s` exited with status %d", e.Key, e.Command, e.Status)
	if e.Tail != "" {
		msg += "; its output ended with:\n" + e.Tail
	}
	return msg
}

// ExitCode reports a failed policy command as an unexpected failure.
func (e *CommandError) ExitCode() int { return exitcode.Failure }

// commandEnv is the environment of a command run on the host for an
// env: nothing is ever substituted into a command string, it sees the env
// only through ApexVars.
func commandEnv(env *state.Env) []string {
	return append(gitx.CleanEnv(), ApexVars(env)...)
}

// ApexVars are the variables a command sees of its env.
func ApexVars(env *state.Env) []string {
	return []string{"APEX_ID=" + env.Identity, "APEX_PATH=" + env.Path, "APEX_BRANCH=" + env.Branch,
		"APEX_BASE=" + env.Base, "APEX_WORKFLOW=" + env.Workflow, "APEX_MODE=" + env.Mode}
}

// runCommands runs each command as `sh -c <command>` in dir, in order,
// streaming its output to stderr, and stops at the first that fails.
func (m *Manager) runCommands(ctx context.Context, env *state.Env, dir, key string, commands []string) error {
	for _, command := range commands {
		m.notef("%s: running %s: %s", env.Identity, key, command)
		tail := &tailBuffer{max: 2048}
		out := io.MultiWriter(m.opts.Stderr, tail)
		status, err := hostexec.Run(ctx, hostexec.Command{Argv: []string{"sh", "-c", command}, Dir: dir, Env: commandEnv(env),
			Stdout: out, Stderr: out})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || status != 0 {
			return &CommandError{Key: key, Command: command, Status: status, Tail: tail.String()}
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

// trustedSettings reports whether the policy's host settings are approved
// for this repository; settings with nothing in them need no approval.
func (m *Manager) trustedSettings(pol *policy.Policy) (bool, policy.HostSettings, error) {
	host := pol.HostSettings()
	if host.Empty() {
		return true, host, nil
	}
	store, err := m.trustStore()
	if err != nil {
		return false, host, err
	}
	ok, err := store.Approved(m.repoKey(), host.Hash())
	return ok, host, err
}

// repoKey names this repository in the user's approvals: where its git
// directory really is, so a copy elsewhere is another repository.
func (m *Manager) repoKey() string { return realPath(m.Git.CommonDir) }

// warnUntrusted says what the policy would run and how to approve it.
func (m *Manager) warnUntrusted(host policy.HostSettings) {
	m.warnf("not running or using these settings of the policy until you approve them with `git apex trust`:\n  %s",
		strings.Join(host.Lines(), "\n  "))
}

// Trust approves the policy's host settings for this repository, or with
// revoke withdraws the approval. It returns the settings approved (none
// when there is nothing to approve) and, for revoke, whether there was
// an approval to withdraw.
func (m *Manager) Trust(revoke bool) (host policy.HostSettings, had bool, err error) {
	store, err := m.trustStore()
	if err != nil {
		return host, false, err
	}
	if revoke {
		had, err = store.Revoke(m.repoKey())
		return host, had, err
	}
	pol, err := m.Policy()
	if err != nil {
		return host, false, err
	}
	host = pol.HostSettings()
	if host.Empty() {
		return host, false, nil
	}
	return host, false, store.Approve(m.repoKey(), host.Hash())
}

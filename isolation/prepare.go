package isolation

import (
	"context"
	"fmt"

	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// prepare readies a new env, outside the repository lock: it copies the
// policy's files from the main checkout, initialises submodules, then runs
// the setup commands and post_create hooks. Commands, and copies from
// outside the checkout, happen only when `git apex trust` approved them;
// otherwise a warning lists them. A failing command leaves the env in
// place, marked in its metadata, and is returned.
func (m *Manager) prepare(ctx context.Context, env *state.Env, pol *policy.Policy) error {
	trusted, host, err := m.r.Trusted(pol)
	if err != nil {
		return err
	}
	if !trusted {
		m.r.WarnUntrusted(host)
	}
	if env.Mode != string(policy.Shared) {
		if err := copyFiles(m.r.Git.MainRoot(), env.Path, pol.Worktree.Copy, trusted); err != nil {
			return m.setupFailed(ctx, env, err)
		}
		// A full env's submodules stay uninitialised: see the sandbox package.
		if pol.Worktree.Submodules && !env.Contained() {
			if err := m.r.Git.InitSubmodules(ctx, env.Path); err != nil {
				return m.setupFailed(ctx, env, err)
			}
		}
	}
	if !trusted {
		return nil
	}
	steps := []struct {
		key      string
		commands []string
	}{
		{"worktree.setup", pol.Worktree.Setup},
		{"workflow." + env.Workflow + ".setup", pol.Workflow[env.Workflow].Setup},
		{"hooks.post_create", pol.Hooks.PostCreate},
	}
	for _, step := range steps {
		if err := m.runCommands(ctx, env, env.Path, step.key, step.commands); err != nil {
			return m.setupFailed(ctx, env, err)
		}
	}
	return nil
}

// setupFailed marks an env whose preparation failed and records why.
func (m *Manager) setupFailed(ctx context.Context, env *state.Env, cause error) error {
	if env.Metadata == nil {
		env.Metadata = map[string]string{}
	}
	env.Metadata["setup"] = "failed"
	if err := m.r.Store.Save(context.WithoutCancel(ctx), env, "setup-failed", cause.Error()); err != nil {
		return err
	}
	return fmt.Errorf("cannot prepare %s, kept at %s: %w", env.Identity, env.Path, cause)
}

// Package setup runs what the policy asks of an env: on a start, the
// copies of [worktree].copy, submodules, the setup commands and the
// post_create hooks; on a removal, the pre_remove and post_remove hooks.
// Commands, and copies from outside the checkout, run only once `git apex
// trust` approved them. Commands run each as `sh -c` with nothing
// substituted into it: they see the env through its APEX_* variables.
// They run on the host through hostexec, except those of a full env's
// directory, which run in its container through the Runner its caller
// passes (envexec.Commands).
package setup

import (
	"context"
	"fmt"

	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// Prepare readies a new env, outside the repository lock: it copies the
// policy's files from the main checkout, initialises submodules, then runs
// the setup commands and post_create hooks. Commands, and copies from
// outside the checkout, happen only when `git apex trust` approved them;
// otherwise a warning lists them. They run through run (nil: on the
// host; a full env's run in its container); on the host only when the
// approval covers the host (repo.Repo.TrustedOnHost: not for a policy
// approved to run them in containers only, whose env fell back to
// worktree), else a warning names them. give (when not nil)
// hands the files copied to the env's container first (copy mode's sees
// none of the host's). A failing command leaves the env in
// place, marked in its metadata, and is returned.
func Prepare(ctx context.Context, r *repo.Repo, env *state.Env, pol *policy.Policy, run Runner, give func(ctx context.Context, paths []string) error) error {
	trusted, host, err := r.Trusted(pol)
	if env.Contained() { // its container gets the copies: every glob needs approval
		trusted, host, err = r.TrustedFull(pol)
	}
	if err != nil {
		return err
	}
	if !trusted {
		r.WarnUntrusted(host)
	}
	if env.Mode != string(policy.Shared) {
		written, err := copyFiles(r, env.Path, pol.Worktree.Copy, host.CopyOutside, trusted, env.Contained())
		if err == nil && give != nil && len(written) > 0 {
			err = give(ctx, written)
		}
		if err != nil {
			return failed(ctx, r, env, err)
		}
		// A full env's submodules stay uninitialised: see the sandbox package.
		if pol.Worktree.Submodules && !env.Contained() {
			if err := r.Git.InitSubmodules(ctx, env.Path); err != nil {
				return failed(ctx, r, env, err)
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
	if !env.Contained() {
		var pending []string
		for _, step := range steps {
			for _, command := range step.commands {
				pending = append(pending, step.key+": "+command)
			}
		}
		if len(pending) > 0 {
			onHost, _, err := r.TrustedOnHost(pol)
			if err != nil {
				return err
			}
			if !onHost { // approved in containers only: not here, on the host
				r.WarnNotOnHost(env, pending)
				return r.Store.Record(ctx, env, "skipped", fmt.Sprintf("setup: %d command(s) approved in containers only, not run on the host", len(pending)))
			}
		}
	}
	for _, step := range steps {
		if err := Run(ctx, r, env, env.Path, step.key, step.commands, run); err != nil {
			return failed(ctx, r, env, err)
		}
	}
	return nil
}

// failed marks an env whose preparation failed and records why.
func failed(ctx context.Context, r *repo.Repo, env *state.Env, cause error) error {
	if env.Metadata == nil {
		env.Metadata = map[string]string{}
	}
	env.Metadata["setup"] = "failed"
	if err := r.Store.Save(context.WithoutCancel(ctx), env, "setup-failed", cause.Error()); err != nil {
		return err
	}
	return fmt.Errorf("cannot prepare %s, kept at %s: %w", env.Identity, env.Path, cause)
}

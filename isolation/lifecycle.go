package isolation

import (
	"context"
	"errors"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Link makes alias resolve to the env of target, or, when target is "",
// to the env whose worktree holds cwd. It refuses an alias that has its
// own live env or is a link already, a target with no live env, and a
// link of an identity to itself.
func (m *Manager) Link(ctx context.Context, alias, target, cwd string) (*state.Env, error) {
	aliasID, err := policy.ParseIdentity(alias)
	if err != nil {
		return nil, err
	}
	pol, err := m.Policy()
	if err != nil {
		return nil, err
	}
	if err := pol.CheckWorkflow(aliasID.Workflow); err != nil {
		return nil, err
	}
	lk, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	var env *state.Env
	if target == "" {
		if env, err = m.envAt(ctx, cwd); err != nil {
			return nil, err
		}
		target = env.Identity
	} else if env, _, err = m.resolve(ctx, target); err != nil {
		return nil, err
	}
	if owner, link, err := m.Store.Resolve(ctx, alias); err != nil {
		return nil, err
	} else if owner != nil {
		switch {
		case owner.ID == env.ID && link == nil:
			return nil, exitcode.New(exitcode.Usage, "cannot link %s to itself: it is that environment's own identity", alias)
		case owner.ID == env.ID:
			return env, nil // already linked there
		case link != nil:
			return nil, exitcode.New(exitcode.Refused, "cannot link %s: it already links to %s; run `git apex unlink %s` first", alias, owner.Identity, alias)
		default:
			return nil, exitcode.New(exitcode.Refused, "cannot link %s: it has its own environment at %s; close or remove it first", alias, owner.Path)
		}
	}
	if err := m.Store.AddLink(ctx, alias, env, state.KindLink, target); err != nil {
		return nil, err
	}
	return env, nil
}

// envAt finds the live env whose worktree holds dir.
func (m *Manager) envAt(ctx context.Context, dir string) (*state.Env, error) {
	envs, err := m.Store.Envs(ctx, false)
	if err != nil {
		return nil, err
	}
	var best *state.Env
	for _, e := range envs {
		if e.Mode != string(policy.Shared) && within(dir, e.Path) && (best == nil || len(e.Path) > len(best.Path)) {
			best = e
		}
	}
	if best == nil {
		return nil, exitcode.New(exitcode.NotFound, "the current directory is in no environment: name the identity to link to, as in `git apex link <alias> <identity>`")
	}
	return best, nil
}

// Unlink drops a link.
func (m *Manager) Unlink(ctx context.Context, alias string) (*state.Env, error) {
	env, link, err := m.resolve(ctx, alias)
	if err != nil {
		return nil, err
	}
	if link == nil {
		return nil, exitcode.New(exitcode.Usage, "cannot unlink %s: it is an environment's own identity, not a link; `git apex close %s` ends it", alias, alias)
	}
	return env, m.Store.RemoveLink(ctx, link, "unlinked by hand")
}

// Ending says what close or finish did with an env.
type Ending struct {
	Env         *state.Env
	StillUsedBy []string      // other identities that keep the env
	Removed     *RemoveResult // when the env was removed
	Preserved   string        // when kept: why
}

// CloseIdentity ends an identity: a link is dropped, an env's own identity is
// marked closed. When no identity still uses the env, it is removed if
// that is safe, else kept as preserved with the reason.
func (m *Manager) CloseIdentity(ctx context.Context, identity, cwd string) (*Ending, error) {
	lk, env, link, err := m.lockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if link != nil {
		err = m.Store.RemoveLink(ctx, link, "closed")
	} else {
		env.IdentityClosed = true
		err = m.Store.Save(ctx, env, "closed", "")
	}
	if err != nil {
		return nil, err
	}
	users, err := m.users(ctx, env)
	if err != nil || len(users) > 0 {
		return &Ending{Env: env, StillUsedBy: users}, err
	}
	return m.end(ctx, lk, env, cwd, "closed")
}

// users lists the open identities that use an env.
func (m *Manager) users(ctx context.Context, env *state.Env) ([]string, error) {
	var users []string
	if !env.IdentityClosed {
		users = append(users, env.Identity)
	}
	links, err := m.Store.LinksOf(ctx, env.ID)
	for _, l := range links {
		users = append(users, l.Alias)
	}
	return users, err
}

// Finish ends an env's lifecycle. On success it removes the env when
// [worktree].cleanup_on_complete is on; on failure it keeps it as
// preserved when [worktree].preserve_on_failure is on, else removes it.
// A removal that is refused or fails does not make Finish fail: the env
// is kept as preserved with the reason, and a warning says so.
func (m *Manager) Finish(ctx context.Context, identity string, failed bool, cwd string) (*Ending, error) {
	pol, err := m.Policy()
	if err != nil {
		return nil, err
	}
	lk, env, _, err := m.lockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	switch {
	case failed && pol.Worktree.PreserveOnFailure:
		return &Ending{Env: env, Preserved: "finished with failure"}, m.preserve(ctx, env, "finished with failure")
	case !failed && !pol.Worktree.CleanupOnComplete:
		return &Ending{Env: env}, m.Store.Record(ctx, env, "finished", "kept: cleanup_on_complete is off")
	}
	outcome := "finished"
	if failed {
		outcome = "finished with failure"
	}
	return m.end(ctx, lk, env, cwd, outcome)
}

// end removes an env nobody uses any more, without force. When the
// removal is refused or fails, the env is kept as preserved with the
// reason, a warning, and a "skipped" event.
func (m *Manager) end(ctx context.Context, lk *gitx.Locked, env *state.Env, cwd, outcome string) (*Ending, error) {
	res, err := m.remove(ctx, lk, env, RemoveOptions{Cwd: cwd})
	if err == nil {
		return &Ending{Env: env, Removed: res}, nil
	}
	var coded *exitcode.Error
	var gerr *gitx.Error
	if !errors.As(err, &coded) && !errors.As(err, &gerr) {
		return nil, err
	}
	reason := err.Error()
	m.warnf("%s %s, but its environment was kept: %s", env.Identity, outcome, reason)
	if err := m.Store.Record(ctx, env, "skipped", "cleanup: "+reason); err != nil {
		return nil, err
	}
	return &Ending{Env: env, Preserved: reason}, m.preserve(ctx, env, reason)
}

// preserve keeps an env for inspection, with the reason in its metadata.
func (m *Manager) preserve(ctx context.Context, env *state.Env, reason string) error {
	env.Status = state.Preserved
	if env.Metadata == nil {
		env.Metadata = map[string]string{}
	}
	env.Metadata["preserved_reason"] = reason
	return m.Store.Save(ctx, env, "preserved", reason)
}

// Log returns the event log, oldest first: all of it, or an identity's
// and its env's. An identity with no env and no events is not found.
func (m *Manager) Log(ctx context.Context, identity string) ([]state.Event, error) {
	var envID int64
	if identity != "" {
		if _, err := policy.ParseIdentity(identity); err != nil {
			return nil, err
		}
		env, _, err := m.Store.Resolve(ctx, identity)
		if env == nil && err == nil {
			env, err = m.Store.Latest(ctx, identity)
		}
		if err != nil {
			return nil, err
		}
		if env != nil {
			envID = env.ID
		}
	}
	events, err := m.Store.Events(ctx, identity, envID)
	if err == nil && identity != "" && len(events) == 0 {
		return nil, exitcode.New(exitcode.NotFound, "nothing is known of %s", identity)
	}
	return events, err
}

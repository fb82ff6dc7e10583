package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostpath"
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
	pol, err := m.r.Policy()
	if err != nil {
		return nil, err
	}
	if err := pol.CheckWorkflow(aliasID.Workflow); err != nil {
		return nil, err
	}
	lk, err := m.r.Lock(ctx)
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
	} else if env, _, err = m.r.Resolve(ctx, target); err != nil {
		return nil, err
	}
	if owner, link, err := m.r.Store.Resolve(ctx, alias); err != nil {
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
	if err := m.r.Store.AddLink(ctx, alias, env, state.KindLink, target); err != nil {
		return nil, err
	}
	return env, nil
}

// envAt finds the live env whose worktree holds dir.
func (m *Manager) envAt(ctx context.Context, dir string) (*state.Env, error) {
	envs, err := m.r.Store.Envs(ctx, false)
	if err != nil {
		return nil, err
	}
	var best *state.Env
	for _, e := range envs {
		if e.Mode != string(policy.Shared) && hostpath.Within(dir, e.Path) && (best == nil || len(e.Path) > len(best.Path)) {
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
	env, link, err := m.r.Resolve(ctx, alias)
	if err != nil {
		return nil, err
	}
	if link == nil {
		return nil, exitcode.New(exitcode.Usage, "cannot unlink %s: it is an environment's own identity, not a link; `git apex close %s` ends it", alias, alias)
	}
	return env, m.r.Store.RemoveLink(ctx, link, "unlinked by hand")
}

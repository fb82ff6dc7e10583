package isolation

import (
	"context"
	"errors"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// Ending says what close or finish did with an env.
type Ending struct {
	Env         *state.Env
	StillUsedBy []string      // other identities that keep the env
	Removed     *RemoveResult // when the env was removed
	Preserved   string        // when kept: why
}

// CloseIdentity ends an identity: a link is dropped, an env's own identity is
// marked closed. When no identity still uses the env, it is removed if
// that is safe, else kept as preserved with the reason. force and kill
// are remove's: force removes it whatever it holds (its uncommitted work
// kept in the trash), kill ends the processes working in it first.
func (m *Manager) CloseIdentity(ctx context.Context, identity, cwd string, force, kill bool) (*Ending, error) {
	lk, env, link, err := m.r.LockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if link != nil {
		err = m.r.Store.RemoveLink(ctx, link, "closed")
	} else {
		env.IdentityClosed = true
		err = m.r.Store.Save(ctx, env, "closed", "")
	}
	if err != nil {
		return nil, err
	}
	users, err := m.users(ctx, env)
	if err != nil || len(users) > 0 {
		return &Ending{Env: env, StillUsedBy: users}, err
	}
	return m.end(ctx, lk, env, cwd, "closed", force, kill)
}

// users lists the open identities that use an env.
func (m *Manager) users(ctx context.Context, env *state.Env) ([]string, error) {
	var users []string
	if !env.IdentityClosed {
		users = append(users, env.Identity)
	}
	links, err := m.r.Store.LinksOf(ctx, env.ID)
	for _, l := range links {
		users = append(users, l.Alias)
	}
	return users, err
}

// end removes an env nobody uses any more (force and kill: as remove's).
// When the removal is refused or fails, the env is kept as preserved
// with the reason, a warning, and a "skipped" event.
func (m *Manager) end(ctx context.Context, lk *gitx.Locked, env *state.Env, cwd, outcome string, force, kill bool) (*Ending, error) {
	res, err := m.RemoveLocked(ctx, lk, env, RemoveOptions{Cwd: cwd, Force: force, Kill: kill})
	if err == nil {
		return &Ending{Env: env, Removed: res}, nil
	}
	var coded *exitcode.Error
	var gerr *gitx.Error
	if !errors.As(err, &coded) && !errors.As(err, &gerr) {
		return nil, err
	}
	reason := err.Error()
	m.r.Warnf("%s %s, but its environment was kept: %s", env.Identity, outcome, reason)
	if err := m.r.Store.Record(ctx, env, "skipped", "cleanup: "+reason); err != nil {
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
	return m.r.Store.Save(ctx, env, "preserved", reason)
}

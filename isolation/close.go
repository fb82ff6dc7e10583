package isolation

import (
	"context"
	"errors"
	"slices"

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
// marked closed. When no other identity uses the env, it is removed if
// that is safe, else kept as preserved with the reason, and then the
// identity keeps naming it (path, remove, close --force reach it) until it
// is removed. force and kill are remove's: force removes it whatever it
// holds (its uncommitted work kept in the trash), kill ends the processes
// working in it first. Processes working in it, without kill, refuse the
// close (exit 3) with nothing changed.
func (m *Manager) CloseIdentity(ctx context.Context, identity, cwd string, force, kill bool) (*Ending, error) {
	lk, env, link, err := m.r.LockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	name := env.Identity
	if link != nil {
		name = link.Alias
	}
	users, err := m.users(ctx, env)
	if err != nil {
		return nil, err
	}
	others := slices.DeleteFunc(users, func(u string) bool { return u == name })
	if len(others) > 0 {
		if err := m.closeName(ctx, env, link); err != nil {
			return nil, err
		}
		return &Ending{Env: env, StillUsedBy: others}, nil
	}
	// The last identity: the env goes first, or the identity stays with it.
	retry := "git apex close --kill " + identity
	if force {
		retry = "git apex close --force --kill " + identity
	}
	end, err := m.end(ctx, lk, env, cwd, "closed", "close "+identity, retry, force, kill)
	switch {
	case err != nil:
		return nil, err
	case end.Removed != nil && link == nil:
		return end, m.closeName(ctx, env, nil)
	case end.Removed != nil: // the removal dropped the link
		return end, nil
	}
	return end, m.r.Store.Record(ctx, env, "closed", "kept as preserved: "+name+" still names it")
}

// closeName drops link, or when it is nil marks the env's own identity
// closed.
func (m *Manager) closeName(ctx context.Context, env *state.Env, link *state.Link) error {
	if link != nil {
		return m.r.Store.RemoveLink(ctx, link, "closed")
	}
	env.IdentityClosed = true
	return m.r.Store.Save(ctx, env, "closed", "")
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
// Processes working in it refuse it (exit 3, nothing changed), as what
// (the command: "close issue-42") with retry (the same with --kill) says.
// When the removal is refused for anything else, or fails, the env is
// kept as preserved with the reason, a warning, and a "skipped" event.
func (m *Manager) end(ctx context.Context, lk *gitx.Locked, env *state.Env, cwd, outcome, what, retry string, force, kill bool) (*Ending, error) {
	res, err := m.RemoveLocked(ctx, lk, env, RemoveOptions{Cwd: cwd, Force: force, Kill: kill})
	if err == nil {
		return &Ending{Env: env, Removed: res}, nil
	}
	var inUse *InUseError
	if errors.As(err, &inUse) {
		return nil, inUse.Refusal(what, retry)
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

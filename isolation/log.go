package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Log returns the event log, oldest first: all of it, or an identity's
// and its env's. An identity with no env and no events is not found.
func (m *Manager) Log(ctx context.Context, identity string) ([]state.Event, error) {
	var envID int64
	if identity != "" {
		if _, err := policy.ParseIdentity(identity); err != nil {
			return nil, err
		}
		env, _, err := m.r.Store.Resolve(ctx, identity)
		if env == nil && err == nil {
			env, err = m.r.Store.Latest(ctx, identity)
		}
		if err != nil {
			return nil, err
		}
		if env != nil {
			envID = env.ID
		}
	}
	events, err := m.r.Store.Events(ctx, identity, envID)
	if err == nil && identity != "" && len(events) == 0 {
		return nil, exitcode.New(exitcode.NotFound, "nothing is known of %s", identity)
	}
	return events, err
}

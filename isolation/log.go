package isolation

import (
	"context"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/state"
)

// Log returns the event log, oldest first: all of it, or an identity's
// and its env's. An identity with no env and no events is not found.
func (m *Manager) Log(ctx context.Context, identity string) ([]state.Event, error) {
	var envID int64
	if identity != "" {
		env, err := m.r.Find(ctx, identity)
		switch {
		case err == nil:
			envID = env.ID
		case exitcode.Of(err) != exitcode.NotFound:
			return nil, err // an identity with no env may still have events
		}
	}
	events, err := m.r.Store.Events(ctx, identity, envID)
	if err == nil && identity != "" && len(events) == 0 {
		return nil, exitcode.New(exitcode.NotFound, "nothing is known of %s", identity)
	}
	return events, err
}

package isolation

import (
	"context"

	"github.com/git-apex/git-apex/state"
)

// Annotate sets keys of the metadata of the live env identity names (a
// value of "" deletes its key) and records an event of kind with detail.
// It reads and writes the record under the repository lock, so that it
// never undoes another process's change to the env.
func (m *Manager) Annotate(ctx context.Context, identity string, meta map[string]string, kind, detail string) (*state.Env, error) {
	lk, env, _, err := m.r.LockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if env.Metadata == nil {
		env.Metadata = map[string]string{}
	}
	for k, v := range meta {
		if v == "" {
			delete(env.Metadata, k)
		} else {
			env.Metadata[k] = v
		}
	}
	return env, m.r.Store.Save(ctx, env, kind, detail)
}

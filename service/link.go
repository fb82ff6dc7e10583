package service

import "context"

// Link makes alias resolve to the env of identity, or, when identity is
// "", to the env whose worktree holds cwd. It returns that env.
func (s *Service) Link(ctx context.Context, alias, identity, cwd string) (*Env, error) {
	return envResult(s.m.Link(ctx, alias, identity, cwd))
}

// Unlink drops a link and returns the env it resolved to.
func (s *Service) Unlink(ctx context.Context, alias string) (*Env, error) {
	return envResult(s.m.Unlink(ctx, alias))
}

// Annotate sets keys of a live env's metadata ("" deletes one) and
// records an event of kind with detail. It reads and writes the record
// under the repository lock, so that it never undoes another process's
// change to the env; it is the same in every isolation mode.
func (s *Service) Annotate(ctx context.Context, identity string, meta map[string]string, kind, detail string) error {
	lk, env, _, err := s.r.LockedEnv(ctx, identity)
	if err != nil {
		return identityError(err)
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
	return s.r.Store.Save(ctx, env, kind, detail)
}

package isolation

import "context"

// Finish ends an env's lifecycle. On success it removes the env when
// [worktree].cleanup_on_complete is on; on failure it keeps it as
// preserved when [worktree].preserve_on_failure is on, else removes it.
// A refused or failed removal (cwd and kill: as for CloseIdentity) does
// not make Finish fail: the env is kept as preserved, with the reason;
// but processes working in it, without kill, refuse it (exit 3) with
// nothing changed.
func (m *Manager) Finish(ctx context.Context, identity string, failed bool, cwd string, kill bool) (*Ending, error) {
	pol, err := m.r.Policy()
	if err != nil {
		return nil, err
	}
	lk, env, _, err := m.r.LockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	switch {
	case failed && pol.Worktree.PreserveOnFailure:
		return &Ending{Env: env, Preserved: "finished with failure"}, m.preserve(ctx, env, "finished with failure")
	case !failed && !pol.Worktree.CleanupOnComplete:
		return &Ending{Env: env}, m.r.Store.Record(ctx, env, "finished", "kept: cleanup_on_complete is off")
	}
	outcome, flags := "finished", ""
	if failed {
		outcome, flags = "finished with failure", "--failed "
	}
	return m.end(ctx, lk, env, cwd, outcome, "finish "+identity, "git apex finish "+flags+"--kill "+identity, false, kill)
}

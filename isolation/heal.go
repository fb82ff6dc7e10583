package isolation

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// heal compares a live env with git's worktrees and repairs what it
// safely can: a worktree moved with `git worktree move` is followed, a
// branch switched by hand is recorded, and an env whose directory is gone
// is marked destroyed (its stale git registration removed under lk, when
// lk is not nil). It returns the env's worktree when it has one.
func (m *Manager) heal(ctx context.Context, lk *gitx.Locked, env *state.Env, worktrees []gitx.Worktree) (gitx.Worktree, bool, error) {
	if !env.Live() || env.Mode == string(policy.Shared) {
		return gitx.Worktree{}, false, nil
	}
	wt, found := gitx.FindWorktree(worktrees, env.Path)
	if found && !wt.Prunable {
		if env.Branch != "" && wt.Branch != "" && wt.Branch != env.Branch {
			old := env.Branch
			env.Branch = wt.Branch
			if err := m.Store.Save(ctx, env, "switched", fmt.Sprintf("branch %s -> %s, switched by hand", old, wt.Branch)); err != nil {
				return wt, true, err
			}
			m.notef("%s: its worktree was switched by hand from branch %s to %s; recorded", env.Identity, old, wt.Branch)
		}
		return wt, true, nil
	}
	if exists(env.Path) {
		// A directory git no longer knows as a worktree: leave it alone.
		return gitx.Worktree{}, false, nil
	}
	if moved, ok := gitx.WorktreeOnBranch(worktrees, env.Branch); ok && !moved.Prunable && moved.Path != worktrees[0].Path {
		old := env.Path
		env.Path = moved.Path
		if err := m.Store.Save(ctx, env, "moved", fmt.Sprintf("%s -> %s", old, moved.Path)); err != nil {
			return moved, true, err
		}
		m.notef("%s: its worktree was moved to %s; following it", env.Identity, moved.Path)
		return moved, true, nil
	}
	dropped, err := m.Store.Destroy(ctx, env, "healed", "worktree directory gone: "+env.Path)
	if err != nil {
		return gitx.Worktree{}, false, err
	}
	m.notef("%s: its worktree %s was deleted by hand; marked destroyed%s", env.Identity, env.Path, droppedNote(dropped))
	if found && lk != nil {
		// Only the registration is left; removing it frees the branch.
		if err := lk.RemoveWorktree(ctx, wt.Path, false); err != nil {
			m.warnf("cannot unregister the missing worktree %s: %v", wt.Path, err)
		}
	}
	return gitx.Worktree{}, false, nil
}

// droppedNote names the links a destroyed env took with it.
func droppedNote(aliases []string) string {
	if len(aliases) == 0 {
		return ""
	}
	return "; dropped its links " + strings.Join(aliases, ", ")
}

// healAll heals every live env against one worktree listing. Given the
// repository lock as held (nil when not), it takes the lock itself only
// when an env turns out to be gone: the lock is not reentrant.
func (m *Manager) healAll(ctx context.Context, held *gitx.Locked, envs []*state.Env, worktrees []gitx.Worktree) error {
	lk := held
	defer func() {
		if lk != nil && lk != held {
			lk.Unlock()
		}
	}()
	for _, env := range envs {
		if env.Live() && env.Mode != string(policy.Shared) && !exists(env.Path) && lk == nil {
			var err error
			if lk, err = m.Git.Lock(ctx); err != nil {
				return err
			}
		}
		if _, _, err := m.heal(ctx, lk, env, worktrees); err != nil {
			return err
		}
	}
	return nil
}

package isolation

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Drift kinds: how an env's record and git disagree.
const (
	driftNone     = ""
	driftSwitched = "switched" // its worktree is on another branch
	driftMoved    = "moved"    // its worktree was moved with git worktree move
	driftGone     = "gone"     // its directory was deleted
	driftStranger = "stranger" // its directory is there but no longer a git worktree
	driftGitfile  = "gitfile"  // its .git file points away from its git directory
)

// drift is what diagnose found for one env.
type drift struct {
	kind     string
	worktree gitx.Worktree // the env's worktree, when it has one
	found    bool          // worktree is set
	branch   string        // switched: the branch it is on now
	path     string        // moved: where it is now
	problem  string        // gitfile: what is wrong with it
}

// diagnose compares a live env with git's worktrees, changing nothing.
func (m *Manager) diagnose(env *state.Env, worktrees []gitx.Worktree) drift {
	if !env.Live() || env.Mode == string(policy.Shared) {
		return drift{}
	}
	wt, found := gitx.FindWorktree(worktrees, env.Path)
	if found && !wt.Prunable {
		if problem := m.Git.GitfileProblem(wt.Path); problem != "" {
			return drift{kind: driftGitfile, worktree: wt, found: true, problem: problem}
		}
		if env.Branch != "" && wt.Branch != "" && wt.Branch != env.Branch {
			return drift{kind: driftSwitched, worktree: wt, found: true, branch: wt.Branch}
		}
		return drift{worktree: wt, found: true}
	}
	if exists(env.Path) {
		return drift{kind: driftStranger}
	}
	if moved, ok := gitx.WorktreeOnBranch(worktrees, env.Branch); ok && !moved.Prunable && moved.Path != worktrees[0].Path {
		return drift{kind: driftMoved, worktree: moved, found: true, path: moved.Path}
	}
	return drift{kind: driftGone, worktree: wt, found: found}
}

// describe says what a drift is, for people.
func (d drift) describe(env *state.Env) string {
	switch d.kind {
	case driftSwitched:
		return fmt.Sprintf("its worktree was switched by hand from branch %s to %s", env.Branch, d.branch)
	case driftMoved:
		return "its worktree was moved to " + d.path
	case driftGone:
		return "its worktree " + env.Path + " was deleted by hand"
	case driftStranger:
		return env.Path + " is no longer a git worktree"
	case driftGitfile:
		return d.problem
	}
	return ""
}

// heal compares a live env with git's worktrees and repairs what it
// safely can: a worktree moved with `git worktree move` is followed, a
// branch switched by hand is recorded, and an env whose directory is gone
// is marked destroyed (its stale git registration removed under lk, when
// lk is not nil). A directory that is no longer a worktree, and a .git
// file that points away from the worktree's git directory, are left
// alone: heal then fails with exit 3, since no git command may run there
// (`git apex doctor --fix` restores such a .git file). It returns the
// env's worktree when it has one.
func (m *Manager) heal(ctx context.Context, lk *gitx.Locked, env *state.Env, worktrees []gitx.Worktree) (gitx.Worktree, bool, error) {
	d := m.diagnose(env, worktrees)
	if d.kind == driftGitfile {
		return gitx.Worktree{}, false, gitfileRefusal(env, d.problem)
	}
	if err := m.apply(ctx, lk, env, d); err != nil {
		return gitx.Worktree{}, false, err
	}
	if d.kind == driftGone {
		return gitx.Worktree{}, false, nil
	}
	return d.worktree, d.found, nil
}

// apply repairs a drift and says so on stderr.
func (m *Manager) apply(ctx context.Context, lk *gitx.Locked, env *state.Env, d drift) error {
	what := d.describe(env)
	switch d.kind {
	case driftSwitched:
		old := env.Branch
		env.Branch = d.branch
		if err := m.Store.Save(ctx, env, "switched", fmt.Sprintf("branch %s -> %s, switched by hand", old, d.branch)); err != nil {
			return err
		}
		m.notef("%s: %s; recorded", env.Identity, what)
	case driftMoved:
		old := env.Path
		env.Path = d.path
		if err := m.Store.Save(ctx, env, "moved", fmt.Sprintf("%s -> %s", old, d.path)); err != nil {
			return err
		}
		m.notef("%s: %s; following it", env.Identity, what)
	case driftGone:
		dropped, err := m.Store.Destroy(ctx, env, "healed", "worktree directory gone: "+env.Path)
		if err != nil {
			return err
		}
		m.notef("%s: %s; marked destroyed%s", env.Identity, what, droppedNote(dropped))
		if d.found && lk != nil {
			// Only the registration is left; removing it frees the branch.
			if err := lk.RemoveWorktree(ctx, d.worktree.Path, false); err != nil {
				m.warnf("cannot unregister the missing worktree %s: %v", d.worktree.Path, err)
			}
		}
	}
	return nil
}

// gitfileRefusal is the error of a command that will not run git in an
// env whose .git file points away from its git directory.
func gitfileRefusal(env *state.Env, problem string) error {
	return exitcode.New(exitcode.Refused, "refusing to run git in %s (%s): %s; git there would obey another git directory's config. Run `git apex doctor --fix` to restore it",
		env.Identity, env.Path, problem)
}

// snapshot reads git's worktrees and the live envs, under the lock.
func (m *Manager) snapshot(ctx context.Context, lk *gitx.Locked) ([]gitx.Worktree, []*state.Env, error) {
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return nil, nil, err
	}
	envs, err := m.Store.Envs(ctx, false)
	return worktrees, envs, err
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
// when an env turns out to be gone: the lock is not reentrant. It returns,
// by env ID, why git must not run in an env's worktree (see heal).
func (m *Manager) healAll(ctx context.Context, held *gitx.Locked, envs []*state.Env, worktrees []gitx.Worktree) (map[int64]string, error) {
	lk := held
	refused := map[int64]string{}
	defer func() {
		if lk != nil && lk != held {
			lk.Unlock()
		}
	}()
	for _, env := range envs {
		if env.Live() && env.Mode != string(policy.Shared) && !exists(env.Path) && lk == nil {
			var err error
			if lk, err = m.lock(ctx); err != nil {
				return nil, err
			}
		}
		_, _, err := m.heal(ctx, lk, env, worktrees)
		switch {
		case err != nil && exitcode.Of(err) == exitcode.Refused:
			refused[env.ID] = err.Error()
		case err != nil:
			return nil, err
		}
	}
	return refused, nil
}

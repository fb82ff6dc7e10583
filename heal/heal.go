// Package heal finds where an env's record and git disagree (a worktree
// switched to another branch, moved, deleted by hand, replaced by a plain
// directory, or a .git file pointing elsewhere) and repairs what is safe
// to repair. It changes the record and git's registrations, never a
// worktree's files.
package heal

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trap"
)

// Drift kinds: how an env's record and git disagree.
const (
	None     = ""
	Switched = "switched" // its worktree is on another branch
	Moved    = "moved"    // its worktree was moved with git worktree move
	Gone     = "gone"     // its directory is gone: deleted, or moved with plain mv
	Stranger = "stranger" // its directory is there but no longer a git worktree
	Gitfile  = "gitfile"  // its .git file points away from its git directory
	Trapped  = "trapped"  // its worktree holds special files where git opens its own (package trap)
)

// Drift is what Diagnose found for one env.
type Drift struct {
	Kind     string
	Worktree gitx.Worktree // the env's worktree, when it has one
	Found    bool          // Worktree is set
	branch   string        // switched: the branch it is on now
	path     string        // moved: where it is now
	problem  string        // gitfile, trapped: what is wrong with it
}

// Diagnose compares a live env with git's worktrees, changing nothing.
func Diagnose(r *repo.Repo, env *state.Env, worktrees []gitx.Worktree) Drift {
	if !env.Live() || env.Mode == string(policy.Shared) {
		return Drift{}
	}
	wt, found := gitx.FindWorktree(worktrees, env.Path)
	if found && !wt.Prunable {
		if problem := GitfileProblem(r.Git, wt.Path); problem != "" {
			return Drift{Kind: Gitfile, Worktree: wt, Found: true, problem: problem}
		}
		if trap.AtTop(wt.Path) {
			return Drift{Kind: Trapped, Worktree: wt, Found: true, problem: trap.In(wt.Path).Error()}
		}
		if env.Branch != "" && wt.Branch != "" && wt.Branch != env.Branch {
			return Drift{Kind: Switched, Worktree: wt, Found: true, branch: wt.Branch}
		}
		return Drift{Worktree: wt, Found: true}
	}
	if hostpath.Exists(env.Path) {
		return Drift{Kind: Stranger}
	}
	if moved, ok := gitx.WorktreeOnBranch(worktrees, env.Branch); ok && !moved.Prunable && moved.Path != worktrees[0].Path {
		return Drift{Kind: Moved, Worktree: moved, Found: true, path: moved.Path}
	}
	return Drift{Kind: Gone, Worktree: wt, Found: found}
}

// Describe says what a drift is, for people.
func (d Drift) Describe(env *state.Env) string {
	switch d.Kind {
	case Switched:
		return fmt.Sprintf("its worktree was switched by hand from branch %s to %s", env.Branch, d.branch)
	case Moved:
		return "its worktree was moved to " + d.path
	case Gone:
		if d.Found {
			return "its worktree " + env.Path + " is missing (moved or deleted by hand; git still registers it)"
		}
		return "its worktree " + env.Path + " was deleted by hand"
	case Stranger:
		return env.Path + " is no longer a git worktree"
	case Gitfile, Trapped:
		return d.problem
	}
	return ""
}

// MissingHint says how to repair an env whose worktree directory is
// gone while git still registers it: git keeps a moved worktree's
// registration, with its index, until `git worktree repair` finds it.
func MissingHint(env *state.Env) string {
	return fmt.Sprintf("if you moved it, run `git worktree repair <new path>` and git-apex follows it; if you deleted it, `git apex remove %s` drops the record and git's registration",
		env.Identity)
}

// LockReason is why a worktree is locked, for messages.
func LockReason(wt gitx.Worktree) string {
	if wt.LockReason == "" {
		return "no reason given"
	}
	return wt.LockReason
}

// One compares a live env with git's worktrees and repairs what it
// safely can: a worktree moved with `git worktree move` is followed, a
// branch switched by hand is recorded, one moved with plain mv is
// followed when FindMoved finds it (under lk), and an env whose directory is gone
// is marked destroyed (its stale git registration removed under lk, when
// lk is not nil). A directory that is no longer a worktree, and a .git
// file that points away from the worktree's git directory, are left
// alone: One then fails with exit 3, since no git command may run there
// (`git apex doctor --fix` restores such a .git file); so is a worktree
// whose top holds a special file where git opens its own (.gitignore, say). It returns the
// env's worktree when it has one.
func One(ctx context.Context, r *repo.Repo, lk *gitx.Locked, env *state.Env, worktrees []gitx.Worktree) (gitx.Worktree, bool, error) {
	d := Diagnose(r, env, worktrees)
	switch d.Kind {
	case Gitfile:
		return gitx.Worktree{}, false, GitfileRefusal(env, d.problem)
	case Trapped:
		return gitx.Worktree{}, false, exitcode.New(exitcode.Refused, "refusing to run git in %s: %s", env.Identity, d.problem)
	}
	if d.Kind == Gone && d.Found && lk != nil {
		// Moved by hand, perhaps: followed when found, never dropped.
		if moved, ok := FindMoved(r.Git, env.Path); ok {
			wt, err := Follow(ctx, r, lk, env, moved)
			if err != nil {
				return gitx.Worktree{}, false, fmt.Errorf("%s: %s; found it at %s, but cannot repair git's registration: %w", env.Identity, d.Describe(env), moved, err)
			}
			return wt, true, nil
		}
	}
	if err := Repair(ctx, r, lk, env, d); err != nil {
		return gitx.Worktree{}, false, err
	}
	if d.Kind == Gone {
		return gitx.Worktree{}, false, nil
	}
	return d.Worktree, d.Found, nil
}

// Repair repairs a drift and says so on stderr.
func Repair(ctx context.Context, r *repo.Repo, lk *gitx.Locked, env *state.Env, d Drift) error {
	what := d.Describe(env)
	switch d.Kind {
	case Switched:
		old := env.Branch
		env.Branch = d.branch
		if err := r.Store.Save(ctx, env, "switched", fmt.Sprintf("branch %s -> %s, switched by hand", old, d.branch)); err != nil {
			return err
		}
		r.Notef("%s: %s; recorded", env.Identity, what)
	case Moved:
		old := env.Path
		env.Path = d.path
		if err := r.Store.Save(ctx, env, "moved", fmt.Sprintf("%s -> %s", old, d.path)); err != nil {
			return err
		}
		r.Notef("%s: %s; following it", env.Identity, what)
	case Gone:
		dropped, err := r.Store.Destroy(ctx, env, "healed", "worktree directory gone: "+env.Path)
		if err != nil {
			return err
		}
		r.Notef("%s: %s; marked destroyed%s", env.Identity, what, droppedNote(dropped))
		if d.Found && lk != nil {
			// Only the registration is left; removing it frees the branch.
			if err := lk.RemoveWorktree(ctx, d.Worktree.Path); err != nil {
				r.Warnf("cannot unregister the missing worktree %s: %v", d.Worktree.Path, err)
			}
		}
	}
	return nil
}

// CheckGitfile refuses (exit 3) to run git in a contained env whose .git
// file its container made point away from its git directory; nil for
// any other env.
func CheckGitfile(r *repo.Repo, env *state.Env) error {
	if !env.Contained() {
		return nil
	}
	if problem := GitfileProblem(r.Git, env.Path); problem != "" {
		return GitfileRefusal(env, problem)
	}
	return nil
}

// GitfileRefusal is the error of a command that will not run git in an
// env whose .git file points away from its git directory.
func GitfileRefusal(env *state.Env, problem string) error {
	return exitcode.New(exitcode.Refused, "refusing to run git in %s (%s): %s; git there would obey another git directory's config. Run `git apex doctor --fix` to restore it",
		env.Identity, env.Path, problem)
}

// droppedNote names the links a destroyed env took with it.
func droppedNote(aliases []string) string {
	if len(aliases) == 0 {
		return ""
	}
	return "; dropped its links " + strings.Join(aliases, ", ")
}

// All heals every live env against one worktree listing. Given the
// repository lock as held, it repairs every drift One would. Without it
// (held nil: a read-only command, such as list or path) it records only
// what changes no file and no registration, a move followed or a branch
// switch, and leaves an env whose directory is gone as it is, said so on
// stderr with how to repair it: the directory may have been moved with
// plain mv, and git's registration (holding its index) must survive
// until `git worktree repair` finds it. It returns, by env ID, why git
// must not run in an env's worktree (see One), or that it is missing.
func All(ctx context.Context, r *repo.Repo, held *gitx.Locked, envs []*state.Env, worktrees []gitx.Worktree) (map[int64]string, error) {
	refused := map[int64]string{}
	for _, env := range envs {
		if held == nil {
			if d := Diagnose(r, env, worktrees); d.Kind == Gone {
				refused[env.ID] = d.Describe(env) + "; " + MissingHint(env)
				r.Notef("%s: %s", env.Identity, refused[env.ID])
				continue
			}
		}
		_, _, err := One(ctx, r, held, env, worktrees)
		switch {
		case err != nil && exitcode.Of(err) == exitcode.Refused:
			refused[env.ID] = err.Error()
		case err != nil:
			return nil, err
		}
	}
	return refused, nil
}

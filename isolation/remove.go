package isolation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/git-apex/git-apex/envexec"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/intent"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/setup"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// RemoveOptions are the flags of `git apex remove`.
type RemoveOptions struct {
	Force        bool   // discard uncommitted work and unheld commits
	DeleteBranch bool   // delete the env's branch too
	Cwd          string // the caller's directory: the env holding it is kept unless Force
	Kill         bool   // end the processes that use the worktree, instead of refusing
	// DeleteUnkept, with Force (`--force --force`), deletes what the trash
	// cannot keep too (Unkept): nested repositories, changes inside
	// submodules, submodule commits held nowhere else.
	DeleteUnkept bool

	// BranchMerged says the caller (a sweep) found the branch merged into
	// its base, so deleting it loses nothing and needs no further check.
	BranchMerged bool
	// Worktrees is git's worktree list, when the caller has one.
	Worktrees  []gitx.Worktree
	BackErr    error         // why a full env's container did not answer before the lock (service.Remove): not read again
	ReadWithin time.Duration // set by a git hook: the most a full env's container takes to be read (then ErrNoAnswer)
}

// ErrNoAnswer is why a removal with ReadWithin kept an env.
var ErrNoAnswer = errors.New("its container did not answer")

// RemoveResult says what Remove did.
type RemoveResult struct {
	Env           *state.Env
	BranchDeleted bool
	BranchTip     string   // the commit the deleted branch was at
	AlreadyGone   bool     // its directory had been deleted by hand
	DroppedLinks  []string // links that resolved to it
	// Trash is where a forced removal kept the uncommitted work it
	// discarded (`git apex restore` brings it back); nil when there was none.
	Trash *trash.Entry
	// Unkept is what DeleteUnkept let the removal delete unkept.
	Unkept Unkept
	// KeptCommits are the submodule commits that a forced removal kept
	// in the main repository's copies of the submodules.
	KeptCommits []KeptCommits
}

// Remove deletes an env's worktree and marks it destroyed, dropping the
// links that resolved to it. Every check runs before anything changes
// (the worktree goes before the branch, and its removal checks that it
// is clean first), so a refusal (exit 3) changes nothing: it
// refuses a locked worktree, the worktree holding the caller's directory,
// and, unless forced, uncommitted changes or untracked files, commits
// that no branch or remote holds, and (with DeleteBranch) branch commits
// found nowhere else; unless forced, submodule commits found nowhere
// else (forced, they are kept in the main repository's copies of the
// submodules: KeepSubmoduleCommits); unless forced twice (DeleteUnkept),
// the rest of what the trash cannot keep (Unkept). The branch is kept unless DeleteBranch. A shared
// env is only marked destroyed; the main checkout is never touched.
func (m *Manager) Remove(ctx context.Context, identity string, opts RemoveOptions) (*RemoveResult, error) {
	lk, env, _, err := m.r.LockedEnv(ctx, identity)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	return m.RemoveLocked(ctx, lk, env, opts)
}

// RemoveLocked is Remove for an env already found, under the lock.
func (m *Manager) RemoveLocked(ctx context.Context, lk *gitx.Locked, env *state.Env, opts RemoveOptions) (*RemoveResult, error) {
	identity := env.Identity
	if env.Contained() { // what its container wrote cannot hold git, or the lock, for longer
		limit := gitx.ContainedLimit
		if opts.ReadWithin > 0 {
			limit = min(limit, opts.ReadWithin)
		}
		ctx = gitx.Bound(ctx, env.Path, identity, limit)
	}
	worktrees := opts.Worktrees
	if worktrees == nil {
		var err error
		if worktrees, err = lk.Worktrees(ctx); err != nil {
			return nil, err
		}
	}
	wt, found, err := heal.One(ctx, m.r, lk, env, worktrees)
	if err != nil {
		return nil, err
	}
	res := &RemoveResult{Env: env, AlreadyGone: !env.Live()}
	refuse := func(format string, args ...any) error {
		return exitcode.New(exitcode.Refused, "cannot remove %s: "+format, append([]any{identity}, args...)...)
	}
	forceHint := fmt.Sprintf("`git apex remove --force %s`", identity)

	// A full env's container is removed where it is, never looked for elsewhere.
	if err := sandbox.Reach(ctx, m.r, env); err != nil && !opts.Force {
		return nil, exitcode.New(exitcode.Runtime, "cannot remove %s: %v; make it answer and retry, or run %s to remove the environment and leave its container there", identity, err, forceHint)
	}
	// What a full env's container made comes back first: every check below sees it.
	back, err := sandbox.Result{}, opts.BackErr
	if err == nil {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if opts.ReadWithin > 0 {
			rctx, cancel = context.WithTimeout(ctx, opts.ReadWithin)
		}
		back, err = sandbox.BringBackEnv(rctx, m.r, lk, env)
		if cancel(); err != nil && ctx.Err() == nil && rctx.Err() != nil {
			return nil, fmt.Errorf("cannot remove %s: %w in time", identity, ErrNoAnswer)
		}
	}
	if err != nil && !opts.Force {
		return nil, refuse("cannot bring back what its container made: %v; its container is kept: make it answer again and retry with `git apex sync %s`, or run %s to discard what it made", err, identity, forceHint)
	} else if err != nil {
		m.r.Warnf("%s: %v; removing anyway (--force), what its container made since the last exec is lost", identity, err)
	} else if back.To != "" && opts.BranchMerged {
		return nil, refuse("its container made commits on %s since it was found merged", env.Branch)
	}

	removeTree := env.Live() && env.Mode != string(policy.Shared)
	if removeTree && !found {
		return nil, refuse("%s is no longer a git worktree; look inside it, move it away, then run `git apex list` to heal the record", env.Path)
	}
	var users []hostexec.Process
	var unkept Unkept // what the trash cannot keep
	if removeTree {
		switch {
		case wt.Path == worktrees[0].Path:
			return nil, refuse("its path %s is the main checkout", wt.Path)
		case wt.Locked:
			return nil, refuse("its worktree is locked (%s); unlock it with `git worktree unlock %s` first", heal.LockReason(wt), wt.Path)
		case opts.Cwd != "" && hostpath.Within(opts.Cwd, wt.Path) && !opts.Force:
			return nil, refuse("your current directory is inside it; cd elsewhere, or run %s", forceHint)
		}
		if users = hostexec.UsersOf(wt.Path); len(users) > 0 && !opts.Kill {
			return nil, &InUseError{Identity: identity, Users: users}
		}
		// Uncommitted changes are checked by the provider's remove,
		// below, after the intent; this checks what git status does not.
		if !opts.Force {
			if wt.Branch == "" && wt.Head != "" {
				n, err := lk.Unheld(ctx, wt.Head, "")
				if err != nil {
					return nil, err
				}
				if n > 0 {
					return nil, refuse("its detached HEAD has %s that no branch or remote holds; create a branch for them, or run %s to discard them", words.Count(n, "commit"), forceHint)
				}
			}
		}
		// What the trash cannot keep is deleted only when said twice, as
		// git clean deletes a nested repository only with -ff.
		unkept, err = FindUnkept(ctx, lk, wt.Path, env.Contained())
		if terr := (*gitx.TimeoutError)(nil); errors.As(err, &terr) && opts.Force {
			// Forced, a worktree git cannot read in time is removed
			// unread, as its work is (below): said in a warning.
			m.r.Warnf("%s: what the trash cannot keep was not looked for: git did not finish reading its worktree within %v; removing anyway (--force)", identity, terr.Limit)
		} else if err != nil {
			return nil, err
		}
		// Forced, submodule commits are kept where the main repository
		// has the submodule (below); the rest only twice.
		left := unkept.Unkeepable()
		switch {
		case !left.Empty() && !(opts.Force && opts.DeleteUnkept):
			return nil, refuse("it holds what the trash cannot keep: %s; commit and push them, or move them out, or run `git apex remove --force --force %s` to delete them too", unkept, identity)
		case !unkept.Empty() && !opts.Force:
			return nil, refuse("it holds %s; push them, or run %s to keep them in the main repository's copy of the submodule (under %s) and remove it", unkept, forceHint, keptPrefix+identity+"/")
		}
		res.Unkept = left
		if err := sandbox.CheckRemovable(ctx, m.r, env); err != nil {
			return nil, err
		}
	}
	deleteBranch := opts.DeleteBranch && env.Branch != ""
	if deleteBranch {
		if holder, ok := gitx.WorktreeOnBranch(worktrees, env.Branch); ok && holder.Path != wt.Path && !holder.Prunable {
			return nil, refuse("branch %s is checked out in %s; switch that checkout away first", env.Branch, holder.Path)
		}
		if !opts.Force && !opts.BranchMerged {
			if err := checkBranchHeld(ctx, lk, env); err != nil {
				return nil, refuse("%v; merge or push it first, or run `git apex remove --force --delete-branch %s`", err, identity)
			}
		}
	}

	hooks, err := setup.RemoveHooks(m.r, env, opts.Force)
	if err != nil {
		return nil, err
	}
	dirtyRefusal := func() error {
		changes, err := lk.Status(ctx, wt.Path, gitx.StatusOptions{Contained: env.Contained()})
		if err != nil || !changes.Dirty() {
			return err // a trap.Error among them: it names the worktree
		}
		return refuse("it has %s; commit or stash them, or run %s to discard them", changes.Files(), forceHint)
	}
	if len(users) > 0 || env.Live() && len(hooks.PreRemove) > 0 {
		// The processes are ended, and the hook runs, only once nothing can
		// refuse the removal.
		if removeTree && !opts.Force {
			if err := dirtyRefusal(); err != nil {
				return nil, err
			}
		}
		// A full env's runs in its container; one that cannot run is skipped.
		err := setup.Run(ctx, m.r, env, env.Path, "hooks.pre_remove", hooks.PreRemove, envexec.Commands(m.r, lk, env))
		if cerr := (*setup.CommandError)(nil); errors.As(err, &cerr) && cerr.Err != nil && env.Contained() {
			m.r.Warnf("%s: skipped hooks.pre_remove: its container cannot run it: %v", identity, cerr.Err)
		} else if err != nil {
			if !opts.Force {
				return nil, refuse("%v; fix it, or run %s to remove anyway", err, forceHint)
			}
			m.r.Warnf("%v; removing anyway (--force)", err)
		}
	}
	detail := fmt.Sprintf("%s at %s", env.Mode, env.Path)
	if len(users) > 0 {
		if err := hostexec.End(users, repo.KillGrace(m.r)); err != nil {
			return nil, refuse("%v", err)
		}
		m.r.Notef("%s: ended %s", identity, hostexec.Describe(users))
		detail += "; ended " + hostexec.Describe(users)
	}
	if removeTree {
		// git worktree remove would check this in a git status of its own,
		// which no trap.Watch could stop, and refuses any worktree with
		// submodules: this one counts them. Forced, what it finds goes to the
		// trash before the intent (a killed removal that doctor finishes kept
		// it), once a full env's container is stopped (not before the check:
		// a refusal leaves it running).
		if !opts.Force {
			if err := dirtyRefusal(); err != nil {
				return nil, err
			}
		}
		if err := sandbox.DisarmForRemoval(ctx, m.r, env, opts.Force); err != nil {
			return nil, err
		}
		if opts.Force {
			if res.KeptCommits, err = KeepSubmoduleCommits(ctx, lk, unkept, identity, m.r.Store.Now()); err != nil {
				return nil, exitcode.New(exitcode.Refused, "%v, so nothing was deleted; push them, then retry", err)
			}
		}
		// Unforced, the tree is clean: only ignored files that
		// [trash].keep_ignored names are kept.
		if keepIgnored := repo.KeepIgnored(m.r); opts.Force || len(keepIgnored) > 0 {
			what := trash.Entry{Identity: identity, Branch: env.Branch, Base: env.Base, Mode: env.Mode, Path: env.Path}
			kept := trash.Options{Contained: env.Contained(), KeepIgnored: keepIgnored, DeletesBranch: deleteBranch && !opts.BranchMerged}
			res.Trash, err = trash.Record(ctx, lk, what, kept, m.r.Store.Now())
			if terr := (*gitx.TimeoutError)(nil); errors.As(err, &terr) && opts.Force {
				// Forced, what git cannot read in time is discarded, as a file too big for the trash is.
				m.r.Warnf("%s: its uncommitted work was not kept in the trash: git did not finish reading its worktree within %v; removing anyway (--force)", identity, terr.Limit)
			} else if err != nil {
				return nil, err
			}
		}
	}
	in := &intent.Intent{Op: "remove", Identity: identity, Path: env.Path, Branch: env.Branch, DeleteBranch: deleteBranch, Force: opts.Force, Kept: res.Trash != nil}
	if env.Live() && (removeTree || deleteBranch) {
		if err := intent.Write(intent.Dir(m.r.Git.ApexDir()), in); err != nil {
			return nil, err
		}
		defer in.Done()
	}
	if removeTree {
		if err := m.provider(policy.Mode(env.Mode)).remove(ctx, lk, env); err != nil {
			return nil, in.Failed(fmt.Errorf("cannot remove %s: %w", identity, err))
		}
	}
	if deleteBranch {
		refs, err := lk.Refs(ctx, "refs/heads/"+env.Branch)
		if err != nil {
			return nil, err
		}
		if err := lk.DeleteBranch(ctx, env.Branch); err != nil {
			return nil, err
		}
		res.BranchDeleted, res.BranchTip = true, refs["refs/heads/"+env.Branch].Hash
		detail += "; deleted branch " + env.Branch
	}
	if env.Live() {
		if res.DroppedLinks, err = m.r.Store.Destroy(ctx, env, "removed", detail); err != nil {
			return nil, err
		}
		if err := setup.Run(ctx, m.r, env, m.r.Git.MainRoot(), "hooks.post_remove", hooks.PostRemove, nil); err != nil {
			m.r.Warnf("%s was removed, but %v", identity, err)
			if err := m.r.Store.Record(ctx, env, "skipped", "post_remove: "+err.Error()); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// InUseError is a removal refused (exit 3, nothing changed) because
// processes on the host work in the env's worktree and Kill was not
// given: close and finish refuse with it too, rather than keep the env.
type InUseError struct {
	Identity string             // the env's identity
	Users    []hostexec.Process // the processes working in it
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("cannot remove %s: it is in use by %s; stop it, or run `git apex remove --kill %s` to end it first",
		e.Identity, hostexec.Describe(e.Users), e.Identity)
}

// Refusal is the refusal of another command that would have removed the
// env: what it stopped ("close issue-42") and retry, the same command
// with --kill.
func (e *InUseError) Refusal(what, retry string) error {
	return exitcode.New(exitcode.Refused, "cannot %s: its environment is in use by %s; nothing was changed: stop it, or run `%s` to end it first",
		what, hostexec.Describe(e.Users), retry)
}

// ExitCode is exitcode.Refused.
func (e *InUseError) ExitCode() int { return exitcode.Refused }

// checkBranchHeld fails when the env's branch has commits that neither
// its base, any other branch, nor a remote holds.
func checkBranchHeld(ctx context.Context, lk *gitx.Locked, env *state.Env) error {
	n, err := lk.Unheld(ctx, "refs/heads/"+env.Branch, env.Branch)
	if err != nil {
		if refs, rerr := lk.Refs(ctx, "refs/heads/"+env.Branch); rerr == nil && len(refs) == 0 {
			return nil // the branch is already gone
		}
		return err
	}
	if n > 0 {
		return fmt.Errorf("branch %s has %s not in %s, any other branch or a remote", env.Branch, words.Count(n, "commit"), env.Base)
	}
	return nil
}

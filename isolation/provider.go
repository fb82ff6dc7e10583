package isolation

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// provider makes and removes the environments of one mode. Both run under
// the repository lock.
type provider interface {
	// create makes the planned env at its target. What it returns holds
	// an undo that removes whatever it made, also when it fails part-way.
	create(ctx context.Context, lk *gitx.Locked, p *plan, t target) (made, error)
	// remove deletes the env's place, whatever it holds: the caller
	// checks first that nothing would be lost.
	remove(ctx context.Context, lk *gitx.Locked, env *state.Env) error
}

// provider returns the provider of a mode.
func (m *Manager) provider(mode policy.Mode) provider {
	switch mode {
	case policy.Full:
		return containerProvider{r: m.r}
	case policy.Shared:
		return sharedProvider{}
	}
	return worktreeProvider{}
}

// unbranch is the undo of a start that may have created the plan's
// branch: it deletes the branch if it exists and still points at the
// start commit, so it never takes work with it.
func unbranch(lk *gitx.Locked, p *plan, t target) func(context.Context) error {
	if t.branchExists || p.branch == "" {
		return nil
	}
	return func(ctx context.Context) error {
		refs, err := lk.Refs(ctx, "refs/heads/"+p.branch)
		if err != nil || refs["refs/heads/"+p.branch].Hash != t.start {
			return err
		}
		return lk.DeleteBranchAt(ctx, p.branch, t.start)
	}
}

// undoAll runs undos last first and joins their errors.
func undoAll(undos ...func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		var errs []error
		for i := len(undos) - 1; i >= 0; i-- {
			if undos[i] != nil {
				errs = append(errs, undos[i](ctx))
			}
		}
		return errors.Join(errs...)
	}
}

// worktreeProvider gives each env a git worktree on its own branch.
type worktreeProvider struct{}

func (worktreeProvider) create(ctx context.Context, lk *gitx.Locked, p *plan, t target) (made, error) {
	madeDirs := missingDirs(t.path)
	unworktree := func(ctx context.Context) error {
		var errs []error
		if wts, err := lk.Worktrees(ctx); err != nil {
			errs = append(errs, err)
		} else if _, ok := gitx.FindWorktree(wts, t.path); ok {
			errs = append(errs, lk.RemoveWorktree(ctx, t.path))
		}
		// The path did not exist before (check refuses one that does).
		errs = append(errs, os.RemoveAll(t.path))
		for _, dir := range madeDirs {
			os.Remove(dir) // only if still empty
		}
		return errors.Join(errs...)
	}
	undo := undoAll(unbranch(lk, p, t), unworktree)
	return made{undo: undo}, lk.AddWorktree(ctx, t.path, p.branch, !t.branchExists, t.start)
}

// fromSlot makes the planned worktree env from an idle pool slot: it
// moves the slot to the env's path and checks out the branch (no hooks
// run). pooled is false, and nothing made, when no slot was idle or the
// slot could not be moved; the caller then makes the env afresh.
func (m *Manager) fromSlot(ctx context.Context, lk *gitx.Locked, p *plan, t target) (made, error) {
	madeDirs := missingDirs(t.path)
	slot, err := m.pool.Take(ctx, lk, t.path)
	if slot == nil {
		return made{}, err
	}
	// From here the slot is the env's worktree: every failure undoes it.
	got := made{pooled: true, undo: undoAll(unbranch(lk, p, t), func(ctx context.Context) error {
		err := lk.RemoveWorktree(ctx, t.path)
		for _, dir := range madeDirs {
			os.Remove(dir)
		}
		return err
	})}
	if err != nil {
		return got, err
	}
	from := t.start // "" when the slot has it: naming it would rewrite the index
	if wt, ok := gitx.FindWorktree(t.worktrees, slot.Path); ok && wt.Detached && wt.Head == t.start {
		from = ""
	}
	if p.branch == "" && from != "" {
		return got, m.r.Git.CheckoutDetached(ctx, t.path, t.start)
	} else if p.branch == "" {
		return got, nil
	}
	return got, lk.SwitchNoHooks(ctx, t.path, p.branch, !t.branchExists, from)
}

func (worktreeProvider) remove(ctx context.Context, lk *gitx.Locked, env *state.Env) error {
	return lk.RemoveWorktree(ctx, env.Path)
}

// missingDirs lists the ancestors of path that do not exist yet, deepest
// first: the directories `git worktree add` will create.
func missingDirs(path string) []string {
	var dirs []string
	for dir := filepath.Dir(path); !hostpath.Exists(dir); dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return dirs
}

// sharedProvider uses the main checkout itself: it switches it to the
// env's branch, and only when that loses nothing.
type sharedProvider struct{}

func (sharedProvider) create(ctx context.Context, lk *gitx.Locked, p *plan, t target) (made, error) {
	main := t.main
	if main.Branch == p.branch {
		return made{}, nil
	}
	switchBack := func(ctx context.Context) error {
		return lk.Switch(ctx, main.Path, main.Branch, false, main.Head)
	}
	if err := lk.Switch(ctx, main.Path, p.branch, !t.branchExists, t.start); err != nil {
		return made{undo: undoAll(unbranch(lk, p, t))}, err
	}
	return made{undo: undoAll(unbranch(lk, p, t), switchBack)}, nil
}

// sharedClean refuses a shared start whose main checkout has changes to
// tracked files: a switch could mix them up or lose them. Untracked
// files travel with a switch (git refuses to overwrite one).
func sharedClean(ctx context.Context, lk *gitx.Locked, p *plan, t target) error {
	if t.main.Branch == p.branch {
		return nil
	}
	changes, err := lk.Status(ctx, t.main.Path, gitx.StatusOptions{})
	if err != nil {
		return err
	}
	if changes.Staged+changes.Modified > 0 {
		return exitcode.New(exitcode.Refused, "cannot switch the main checkout to %s for %s: it has %s changes; commit or stash them, or use --isolation worktree",
			p.branch, p.id, gitx.Changes{Staged: changes.Staged, Modified: changes.Modified})
	}
	return nil
}

// remove leaves the main checkout alone: a shared env is only forgotten.
func (sharedProvider) remove(context.Context, *gitx.Locked, *state.Env) error {
	return nil
}

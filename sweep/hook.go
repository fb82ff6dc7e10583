package sweep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/merged"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// Hook is what `git apex hook <name> [args...]` runs, from the hooks
// that hooks.Install writes. It removes the environments whose branches
// are now merged, when [worktree].cleanup_on_merge, and says in one line
// each on opts.Stderr what it removed and which merged envs it kept, and
// why; of envs that are simply not merged it says nothing. It never
// fails: an error is one line on stderr, and git's command goes on. It
// does nothing when hooks.SkipVar is set, and sets it for anything it
// runs.
func Hook(ctx context.Context, name string, args []string, opts repo.Options) {
	if os.Getenv(hooks.SkipVar) == "1" {
		return
	}
	os.Setenv(hooks.SkipVar, "1")
	ctx, cancel := context.WithTimeout(ctx, hookBudget)
	defer cancel()
	err := handle(ctx, name, args, opts)
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("stopped after %v, leaving the rest as it was: `git apex gc --merged` removes it (`git apex doctor --fix` finishes a removal cut short)", hookBudget)
	}
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(opts.Stderr, "git-apex: %s hook: %s\n", name, msg)
	}
}

// hookBudget is the most time the hook takes: then everything it runs
// is stopped (git as on Ctrl-C), so nothing an env holds can hold up
// git's command for longer.
const hookBudget = 30 * time.Second

// stateWait is how long the hook waits for another process's write to
// the state database.
const stateWait = time.Second

func handle(ctx context.Context, name string, args []string, opts repo.Options) error {
	switch name {
	case "post-merge":
		if len(args) > 0 && args[0] == "1" {
			return nil // a squash merge commits nothing; post-commit sees its commit
		}
	case "post-commit":
	case "post-rewrite":
		if len(args) > 0 && args[0] != "rebase" {
			return nil // an amend merges nothing
		}
	default:
		return fmt.Errorf("unknown hook (git-apex handles %s)", strings.Join(hooks.Names, ", "))
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	view, err := gitx.OpenHookView(ctx, cwd)
	if err != nil {
		return err
	}
	picked, sure := candidates(ctx, view, name)
	if sure && len(picked) == 0 {
		return nil
	}
	// The hook must not hold git up: it waits for the state database
	// about a second, then leaves everything as it was.
	// The hook reads the checkout's own policy, never a --policy file.
	opts.PolicyFile, opts.StateWait = "", stateWait
	r, err := repo.OpenState(ctx, view.Repo, opts) // git found the repository once, for both
	if err != nil {
		return err
	}
	defer r.Close()
	if !sure {
		picked = nil // every env
	}
	items, err := New(r).Merged(ctx, cwd, picked)
	if err != nil {
		return err
	}
	for _, it := range items {
		switch {
		case it.Removed && it.BranchDeleted:
			fmt.Fprintf(opts.Stderr, "git-apex: removed %s and its branch %s (was %.12s): %s\n", it.Env.Identity, it.Env.Branch, it.BranchTip, it.Why)
		case it.Removed:
			fmt.Fprintf(opts.Stderr, "git-apex: removed %s: %s\n", it.Env.Identity, it.Why)
		case it.Merged:
			fmt.Fprintf(opts.Stderr, "git-apex: kept %s, though merged (%s): %s\n", it.Env.Identity, it.Why, it.Kept)
		}
	}
	return nil
}

// candidates are the envs the change the hook reports could have merged
// (merged.Candidates), found with one more git process at most (view
// took the first) and the state database opened only to read. sure is
// false when they could not be told apart (an older state schema, an
// unreadable ORIG_HEAD, a git error): every env is then checked, which is
// never wrong, only slower.
func candidates(ctx context.Context, view *gitx.HookView, hook string) (picked []*state.Env, sure bool) {
	if view.Branch == "" {
		return nil, true // detached: no branch got anything
	}
	store, err := state.Open(ctx, repo.StatePath(view.Repo), state.Options{ReadOnly: true})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true // git-apex never ran here
	}
	if err != nil {
		return nil, false
	}
	defer store.Close()
	envs, err := store.Envs(ctx, false)
	if err != nil {
		return nil, false
	}
	exposed := merged.Exposed(envs, view)
	if len(exposed) == 0 {
		return nil, true
	}
	from := view.Head + "^" // a commit brings what it changed from its first parent
	if hook != "post-commit" {
		from = view.OrigHead() // a merge or a rebase moved HEAD from there
	}
	if from == "" {
		return nil, false
	}
	brought, err := view.Brought(ctx, from, view.Head)
	if err != nil {
		return nil, false
	}
	cache, err := store.Touched(ctx, merged.Spans(exposed, view.Tips))
	if err != nil {
		return nil, false
	}
	return merged.Candidates(exposed, view.Tips, brought, cache), true
}

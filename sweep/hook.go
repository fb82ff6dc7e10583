package sweep

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-apex/git-apex/hooks"
	"github.com/git-apex/git-apex/repo"
)

// Hook is what `git apex hook <name> [args...]` runs, from the hooks
// that hooks.Install writes. It removes the environments whose branches
// are now merged, when [worktree].cleanup_on_merge, and says in one line
// each on opts.Stderr what it removed and, when anything was merged, what
// it kept and why. It never fails: an error is one line on stderr, and
// git's command goes on. It does nothing when hooks.SkipVar is set, and
// sets it for anything it runs.
func Hook(ctx context.Context, name string, args []string, opts repo.Options) {
	if os.Getenv(hooks.SkipVar) == "1" {
		return
	}
	os.Setenv(hooks.SkipVar, "1")
	if err := handle(ctx, name, args, opts); err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		fmt.Fprintf(opts.Stderr, "git-apex: %s hook: %s\n", name, msg)
	}
}

// stateWait is how long the hook waits for another process's write to
// the state database.
const stateWait = time.Second

func handle(ctx context.Context, name string, args []string, opts repo.Options) error {
	stderr := opts.Stderr
	switch name {
	case "post-merge":
	case "post-rewrite":
		if len(args) > 0 && args[0] != "rebase" {
			return nil // an amend merges nothing
		}
	default:
		return fmt.Errorf("unknown hook (git-apex handles %s)", strings.Join(hooks.Names, " and "))
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	// The hook must not hold git up: it waits for the state database
	// about a second, then leaves everything as it was.
	// The hook reads the checkout's own policy, never a --policy file.
	opts.PolicyFile, opts.StateWait = "", stateWait
	r, err := repo.Open(ctx, cwd, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	items, err := New(r).Merged(ctx, cwd)
	if err != nil {
		return err
	}
	merged := false
	for _, it := range items {
		merged = merged || it.Merged
	}
	if !merged {
		return nil
	}
	for _, it := range items {
		switch {
		case it.Removed && it.BranchDeleted:
			fmt.Fprintf(stderr, "git-apex: removed %s and its branch %s: %s\n", it.Env.Identity, it.Env.Branch, it.Why)
		case it.Removed:
			fmt.Fprintf(stderr, "git-apex: removed %s: %s\n", it.Env.Identity, it.Why)
		default:
			fmt.Fprintf(stderr, "git-apex: kept %s: %s\n", it.Env.Identity, it.Kept)
		}
	}
	return nil
}

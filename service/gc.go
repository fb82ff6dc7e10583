package service

import (
	"context"
	"fmt"
	"time"

	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sweep"
)

// GCRequest asks gc to remove merged and inactive envs and, with
// Orphans, to find and repair what git and the state disagree on. With
// neither Merged nor OlderThan nor Orphans, it does Merged and OlderThan
// [worktree].stale_after.
type GCRequest struct {
	Merged    bool          // envs whose branch is merged into their base
	OlderThan time.Duration // envs inactive for longer than this; 0: none
	Orphans   bool          // worktrees git-apex does not know, envs whose worktree is gone, git's stale registrations
	DryRun    bool          // say what would be done; change nothing
	Force     bool          // with Orphans, adopt unknown worktrees
	Kill      bool          // end the processes working in an env being removed rather than keep it
	Cwd       string        // the caller's directory: the env holding it is kept
}

// GC is `git apex gc` (sweep.Sweeper.GC): one item for each thing it
// removed, kept, pruned, adopted, found or expired (with DryRun: would
// have), in the order done; never nil. An env is removed only when a
// plain removal would be: work is never lost.
func (s *Service) GC(ctx context.Context, r GCRequest) ([]sweep.GCItem, error) {
	items, err := sweep.New(s.r).GC(ctx, sweep.GCOptions{Merged: r.Merged, OlderThan: r.OlderThan, Orphans: r.Orphans,
		DryRun: r.DryRun, Force: r.Force, Kill: r.Kill, Cwd: r.Cwd})
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []sweep.GCItem{}
	}
	return items, nil
}

// ParseDuration reads a positive duration as every front end takes one
// (30m, 12h, 7d, 2w; policy.ParseDuration), refusing anything else as a
// FieldError of field, the name the caller gave it ("--older-than",
// "olderThan").
func ParseDuration(field, value string) (time.Duration, error) {
	d, err := policy.ParseDuration(value)
	if err != nil || d <= 0 {
		return 0, &FieldError{Field: field, Err: fmt.Errorf("%s %q: use a positive duration like 30m, 12h, 7d or 2w", field, value)}
	}
	return d, nil
}

// Package sweep removes envs in numbers: those whose branches are merged
// (found by the merged package) or that have been inactive too long, on
// `git apex gc` and from the git hooks after a merge or a rebase; and,
// for gc --orphans, what git and the state disagree on. Each removal is
// isolation's, without force, so a sweep never removes work.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/merged"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/words"
)

// Sweeper sweeps the envs of an opened repository.
type Sweeper struct {
	r    *repo.Repo
	envs *isolation.Manager
}

// New is the sweeper of an opened repository.
func New(r *repo.Repo) *Sweeper {
	return &Sweeper{r: r, envs: isolation.New(r)}
}

// Options say what Run removes.
type Options struct {
	Merged    bool          // envs whose branch is merged into their base
	OlderThan time.Duration // envs inactive for longer than this; 0: none
	Only      []*state.Env  // look only at these live envs (the hooks' candidates); nil: all
	DryRun    bool          // say what would be done, change nothing
	Cwd       string        // the env holding this directory is kept
	Kill      bool          // end the processes that use an env being removed rather than keep it
	// ReadBudget, when set (the git hooks), is the most all reads of full
	// envs' containers take together: an env whose container does not
	// answer within what is left is kept, and marked (state.NoAnswerKey)
	// so the hooks do not read it again until a command has.
	ReadBudget time.Duration
}

// Item is what Run did, or would do, with one env.
type Item struct {
	Env           *state.Env
	Removed       bool   // removed (with DryRun: would be)
	Why           string // why it was chosen: the merged reason, or how long inactive
	Merged        bool   // chosen because merged
	Kept          string // why it was kept
	BranchDeleted bool
}

// Run removes the live envs that are merged or inactive, oldest first,
// each only if Remove would (no force), deleting merged branches when
// [worktree].delete_merged_branches. It returns an item for every live
// env it looked at, with what it did and why.
func (sw *Sweeper) Run(ctx context.Context, opts Options) ([]Item, error) {
	pol, err := sw.r.Policy()
	if err != nil {
		return nil, err
	}
	lk, err := sw.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	envs, err := sw.r.Store.Envs(ctx, false)
	if err != nil {
		return nil, err
	}
	if opts.Only != nil {
		envs = only(envs, opts.Only)
	}
	// The record must be writable before anything is healed or removed: a
	// removal whose record cannot be written would leave the env's row
	// active. A database another process holds is given up on here, once,
	// within the Store's wait (a second in the hooks).
	if len(envs) > 0 && !opts.DryRun {
		if err := sw.r.Store.Probe(ctx); err != nil {
			return nil, err
		}
	}
	// git's worktree list is read only when needed: it costs a git
	// process that reads every worktree.
	var worktrees []gitx.Worktree
	listWorktrees := func() error {
		if worktrees == nil {
			worktrees, err = lk.Worktrees(ctx)
		}
		return err
	}
	var items []Item
	var present []*state.Env
	readBy := time.Now().Add(opts.ReadBudget)
	for _, e := range envs {
		if e.Mode != string(policy.Shared) && !hostpath.Exists(e.Path) {
			if err := listWorktrees(); err != nil {
				return nil, err
			}
			drift := heal.Diagnose(sw.r, e, worktrees)
			if drift.Kind == heal.Gone && drift.Found { // perhaps moved with plain mv: left for its repair
				items = append(items, Item{Env: e, Kept: drift.Describe(e) + "; " + heal.MissingHint(e)})
				continue
			}
			if opts.DryRun {
				items = append(items, Item{Env: e, Kept: drift.Describe(e) + ": would be healed"})
				continue
			}
			if _, _, err := heal.One(ctx, sw.r, lk, e, worktrees); err != nil {
				return nil, err
			}
			if !e.Live() {
				items = append(items, Item{Env: e, Kept: "its worktree was deleted by hand: marked destroyed"})
				continue
			}
		}
		present = append(present, e) // a moved worktree was followed
	}
	branches, err := sw.r.Git.Branches(ctx, opts.OlderThan > 0)
	if err != nil {
		return nil, err
	}

	status := map[int64]merged.Status{}
	if opts.Merged && len(present) > 0 {
		if status, err = merged.Check(ctx, sw.r.Git, sw.r.Store, present, branches, opts.Only != nil); err != nil {
			return nil, err
		}
	}
	var activity map[int64]time.Time
	if opts.OlderThan > 0 {
		if activity, err = sw.r.Store.LastActivity(ctx); err != nil {
			return nil, err
		}
	}
	for _, e := range present {
		item := Item{Env: e}
		st := status[e.ID]
		switch {
		case st.Merged():
			item.Why, item.Merged = st.Reason, true
		case opts.OlderThan > 0:
			last := maxTime(e.UpdatedAt, activity[e.ID], branches[e.Branch].Committed)
			if idle := sw.r.Store.Now().Sub(last); idle > opts.OlderThan {
				item.Why = "inactive for " + roundDuration(idle)
			} else {
				item.Kept = "active " + roundDuration(idle) + " ago"
			}
		default:
			item.Kept = st.Kept
		}
		if item.Why != "" {
			if err := listWorktrees(); err != nil {
				return nil, err
			}
			sw.sweepOne(ctx, lk, &item, opts, item.Merged && pol.Worktree.DeleteMergedBranches, worktrees, readBy)
		}
		items = append(items, item)
	}
	return items, nil
}

// sweepOne removes one chosen env, or records why it stays. A dry run
// checks what would stop the removal without changing anything.
func (sw *Sweeper) sweepOne(ctx context.Context, lk *gitx.Locked, item *Item, opts Options, deleteBranch bool, worktrees []gitx.Worktree, readBy time.Time) {
	if opts.DryRun {
		item.Kept = sw.wouldKeep(ctx, lk, item.Env, worktrees, opts)
		item.Removed = item.Kept == ""
		return
	}
	env, within := item.Env, time.Duration(0)
	if opts.ReadBudget > 0 {
		within = time.Until(readBy)
	}
	const again = "the hooks do not read it again until `git apex exec`, `sync` or `remove` with it succeeds"
	if opts.ReadBudget > 0 && env.Contained() {
		switch {
		case env.Metadata[state.NoAnswerKey] != "":
			item.Kept = "its container did not answer an earlier hook: " + again
			return
		case env.Metadata[state.GitTimeoutKey] != "":
			item.Kept = "git did not finish in its worktree at an earlier hook: the hooks do not run git there again; `git apex gc --merged` or `git apex remove " + env.Identity + "` removes it"
			return
		case within <= 0:
			item.Kept = fmt.Sprintf("the hook's %v for reading containers is spent: `git apex gc --merged` removes it", opts.ReadBudget)
			return
		}
	}
	res, err := sw.envs.RemoveLocked(ctx, lk, env, isolation.RemoveOptions{Cwd: opts.Cwd, DeleteBranch: deleteBranch,
		BranchMerged: item.Merged, Worktrees: worktrees, ReadWithin: within, Kill: opts.Kill})
	if err == nil {
		item.Removed, item.BranchDeleted = true, res.BranchDeleted
		if res.Trash != nil { // ignored files that [trash].keep_ignored names
			item.Why += fmt.Sprintf("; %s kept in the trash: `git apex restore %s`", words.Count(res.Trash.Files, "ignored file"), env.Identity)
		}
		return
	}
	item.Kept = strings.TrimPrefix(err.Error(), "cannot remove "+env.Identity+": ")
	var rerr error
	var timeout *gitx.TimeoutError
	if opts.ReadBudget > 0 && errors.As(err, &timeout) { // marked: later hooks skip it
		item.Kept = fmt.Sprintf("git did not finish in its worktree within %v: the hooks do not run git there again; `git apex gc --merged` or `git apex remove %s` removes it", timeout.Limit, env.Identity)
		if env.Metadata == nil {
			env.Metadata = map[string]string{}
		}
		env.Metadata[state.GitTimeoutKey] = sw.r.Store.Now().UTC().Format(time.RFC3339)
		rerr = sw.r.Store.Save(ctx, env, "skipped", fmt.Sprintf("%s, but kept: %s", item.Why, item.Kept))
	} else if errors.Is(err, isolation.ErrNoAnswer) { // marked, in the record the event goes with
		item.Kept = fmt.Sprintf("its container did not answer within the hook's %v: %s", opts.ReadBudget, again)
		if env.Metadata == nil {
			env.Metadata = map[string]string{}
		}
		env.Metadata[state.NoAnswerKey] = sw.r.Store.Now().UTC().Format(time.RFC3339)
		rerr = sw.r.Store.Save(ctx, env, "skipped", fmt.Sprintf("%s, but kept: %s", item.Why, item.Kept))
	} else {
		rerr = sw.r.Store.Record(ctx, env, "skipped", fmt.Sprintf("%s, but kept: %s", item.Why, item.Kept))
	}
	if rerr != nil {
		item.Kept += "; " + rerr.Error()
	}
}

// wouldKeep says why a removal would be refused (a locked worktree, the
// caller's directory, a process using it unless Kill, uncommitted work),
// or "".
func (sw *Sweeper) wouldKeep(ctx context.Context, lk *gitx.Locked, env *state.Env, worktrees []gitx.Worktree, opts Options) string {
	cwd := opts.Cwd
	wt, ok := gitx.FindWorktree(worktrees, env.Path)
	switch {
	case env.Mode == string(policy.Shared) || !ok:
		return ""
	case wt.Locked:
		return "its worktree is locked (" + heal.LockReason(wt) + ")"
	case cwd != "" && hostpath.Within(cwd, wt.Path):
		return "your current directory is inside it"
	}
	if !opts.Kill {
		if users := hostexec.UsersOf(wt.Path); len(users) > 0 {
			return "it is in use by " + hostexec.Describe(users)
		}
	}
	if env.Contained() {
		ctx = gitx.Bound(ctx, wt.Path, env.Identity, gitx.ContainedLimit)
	}
	if unkept, err := isolation.FindUnkept(ctx, lk, wt.Path, env.Contained()); err != nil || !unkept.Empty() {
		if err != nil {
			return err.Error()
		}
		return "it holds " + unkept.String()
	}
	if changes, err := lk.Status(ctx, wt.Path, gitx.StatusOptions{Contained: env.Contained()}); err != nil || changes.Dirty() {
		if err != nil {
			return err.Error()
		}
		return "it has " + changes.Files()
	}
	return ""
}

func maxTime(ts ...time.Time) time.Time {
	var latest time.Time
	for _, t := range ts {
		if t.After(latest) {
			latest = t
		}
	}
	return latest
}

// roundDuration prints a duration in its largest whole unit.
func roundDuration(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// Merged is what the git hooks run when a change could have merged
// candidates (nil: any env) in the worktree at cwd: a Run over them for
// merged envs, when [worktree].cleanup_on_merge. It keeps the env
// holding cwd.
func (sw *Sweeper) Merged(ctx context.Context, cwd string, candidates []*state.Env) ([]Item, error) {
	pol, err := sw.r.Policy()
	if err != nil || !pol.Worktree.CleanupOnMerge {
		return nil, err
	}
	return sw.Run(ctx, Options{Merged: true, Only: candidates, Cwd: cwd, ReadBudget: hookReads})
}

// hookReads is the most the reads of full envs' containers take, all
// together, in one hook run: a container that hangs holds git's command
// up this long, once.
const hookReads = 5 * time.Second

// only is the envs of live that are still live among picked, as the
// state has them now.
func only(live, picked []*state.Env) []*state.Env {
	want := make(map[int64]bool, len(picked))
	for _, e := range picked {
		want[e.ID] = true
	}
	var kept []*state.Env
	for _, e := range live {
		if want[e.ID] {
			kept = append(kept, e)
		}
	}
	return kept
}

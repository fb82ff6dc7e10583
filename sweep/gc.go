package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
)

// GCOptions are the flags of `git apex gc`. With neither Merged nor
// OlderThan nor Orphans set, gc does Merged and OlderThan stale_after.
type GCOptions struct {
	Merged    bool
	OlderThan time.Duration
	Orphans   bool
	DryRun    bool
	Force     bool // adopt unknown worktrees (only with Orphans)
	Kill      bool // end the processes that use an env being removed rather than keep it
	Cwd       string
}

// GCItem is one line of gc's report.
type GCItem struct {
	Action string `json:"action"` // removed, would remove, kept, pruned, would prune, adopted, found, expired, would expire
	// What it is about: an env's identity, a worktree's path, or a
	// container's name (and, for an adopted worktree, both identity and
	// path).
	Identity  string `json:"identity,omitempty"`
	Path      string `json:"path,omitempty"`
	Container string `json:"container,omitempty"`
	Reason    string `json:"reason"`
}

// GC removes merged and inactive envs and, with Orphans, reports and
// repairs what git and the state disagree on.
func (sw *Sweeper) GC(ctx context.Context, opts GCOptions) ([]GCItem, error) {
	pol, err := sw.r.Policy()
	if err != nil {
		return nil, err
	}
	if !opts.Merged && opts.OlderThan == 0 && !opts.Orphans {
		opts.Merged, opts.OlderThan = true, time.Duration(pol.Worktree.StaleAfter)
	}
	var items []GCItem
	if opts.Merged || opts.OlderThan > 0 {
		swept, err := sw.Run(ctx, Options{Merged: opts.Merged, OlderThan: opts.OlderThan, DryRun: opts.DryRun, Cwd: opts.Cwd, Kill: opts.Kill})
		if err != nil {
			return nil, err
		}
		for _, it := range swept {
			items = append(items, sweepReport(it, opts.DryRun))
		}
	}
	if opts.Orphans {
		orphans, err := sw.orphans(ctx, pol, opts)
		if err != nil {
			return nil, err
		}
		items = append(items, orphans...)
	}
	expired, err := sw.expireTrash(ctx, pol, opts.DryRun)
	return append(items, expired...), err
}

// expireTrash drops the trash's entries older than [trash].keep; a dry
// run only says which it would.
func (sw *Sweeper) expireTrash(ctx context.Context, pol *policy.Policy, dryRun bool) ([]GCItem, error) {
	lk, err := sw.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	cutoff := sw.r.Store.Now().Add(-time.Duration(pol.Trash.Keep))
	var old []trash.Entry
	if dryRun {
		all, err := trash.List(ctx, lk, "")
		if err != nil {
			return nil, err
		}
		old = slices.DeleteFunc(all, func(e trash.Entry) bool { return !e.At.Before(cutoff) })
	} else if old, err = trash.Expire(ctx, lk, cutoff); err != nil {
		return nil, err
	}
	action := "expired"
	if dryRun {
		action = "would expire"
	}
	var items []GCItem
	for _, e := range old {
		items = append(items, GCItem{Action: action, Identity: e.Identity,
			Reason: fmt.Sprintf("work discarded %s ago, kept longer than [trash].keep", roundDuration(sw.r.Store.Now().Sub(e.At)))})
	}
	return items, nil
}

func sweepReport(it Item, dryRun bool) GCItem {
	item := GCItem{Identity: it.Env.Identity, Action: "kept", Reason: it.Kept}
	if it.Removed {
		item.Action, item.Reason = "removed", it.Why
		if dryRun {
			item.Action = "would remove"
		}
		if it.BranchDeleted {
			item.Reason += fmt.Sprintf("; deleted branch %s (was %.12s)", it.Env.Branch, it.BranchTip)
		}
	} else if it.Why != "" {
		item.Reason = it.Why + ", but " + it.Kept
	}
	return item
}

// orphans finds worktrees under the env root that git-apex does not know
// (adopted with Force when their directory is a valid identity), and git
// registrations whose directory is gone (pruned when git-apex made them,
// ApexMade; kept otherwise). Locked worktrees are
// reported with their reason and never touched.
func (sw *Sweeper) orphans(ctx context.Context, pol *policy.Policy, opts GCOptions) ([]GCItem, error) {
	lk, err := sw.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	worktrees, envs, err := sw.r.Snapshot(ctx, lk)
	if err != nil {
		return nil, err
	}
	if !opts.DryRun {
		if _, err := heal.All(ctx, sw.r, lk, envs, worktrees); err != nil {
			return nil, err
		}
	}
	known := map[string]bool{}
	for _, e := range envs {
		if e.Live() {
			known[hostpath.RealPath(e.Path)] = true
		}
	}
	root := pol.EnvRoot(sw.r.Git.MainRoot(), sw.r.Git.Name)
	var items []GCItem
	var prunable []string
	for _, wt := range worktrees[1:] {
		switch {
		case wt.Prunable && wt.Locked:
			items = append(items, GCItem{Action: "kept", Path: wt.Path, Reason: "directory gone, but locked: " + heal.LockReason(wt)})
		case wt.Prunable && !ApexMade(sw.r, envs, wt.Path):
			items = append(items, GCItem{Action: "kept", Path: wt.Path, Reason: ForeignGoneHint})
		case wt.Prunable:
			prunable = append(prunable, wt.Path)
			action := "pruned"
			if opts.DryRun {
				action = "would prune"
			}
			items = append(items, GCItem{Action: action, Path: wt.Path, Reason: "git's registration of a deleted worktree"})
		case known[hostpath.RealPath(wt.Path)] || !hostpath.Within(wt.Path, root):
		case wt.Locked:
			items = append(items, GCItem{Action: "kept", Path: wt.Path, Reason: "unknown worktree, locked: " + heal.LockReason(wt)})
		default:
			items = append(items, sw.Adopt(ctx, wt, worktrees[0].Branch, opts))
		}
	}
	if len(prunable) > 0 && !opts.DryRun {
		if err := removeRegistrations(ctx, lk, prunable); err != nil {
			return nil, err
		}
	}
	return append(items, sw.orphanContainers(ctx, envs, opts)...), nil
}

// removeRegistrations drops git's registrations of the deleted worktrees
// at paths that are still registered (healing an env may have dropped its
// own already), one by one: never `git worktree prune`, which would drop
// the user's too.
func removeRegistrations(ctx context.Context, lk *gitx.Locked, paths []string) error {
	current, err := lk.Worktrees(ctx)
	if err != nil {
		return err
	}
	for _, path := range paths {
		if _, registered := gitx.FindWorktree(current, path); !registered {
			continue
		}
		if err := lk.RemoveWorktree(ctx, path); err != nil {
			return err
		}
	}
	return nil
}

// orphanContainers finds this repository's labelled containers that no
// live env, and no pool slot as its warm container, owns (a killed
// start's, say), on every engine they may be on that answers
// (repo.Engines); Force removes them.
func (sw *Sweeper) orphanContainers(ctx context.Context, envs []*state.Env, opts GCOptions) []GCItem {
	owned := map[string]bool{}
	for _, e := range envs {
		if e.Container != "" {
			owned[e.Container] = true
		}
	}
	slots, err := sw.r.Store.Pool().All(ctx)
	if err != nil {
		return []GCItem{{Action: "kept", Container: "*", Reason: "cannot list the pool's warm containers: " + err.Error()}}
	}
	for _, s := range slots {
		if s.Warm.Container != "" {
			owned[s.Warm.Container] = true
		}
	}
	var items []GCItem
	for _, on := range sw.r.Engines(ctx, envs) {
		items = append(items, sw.orphansOn(ctx, on, owned, opts)...)
	}
	return items
}

// orphansOn is orphanContainers on one engine.
func (sw *Sweeper) orphansOn(ctx context.Context, on repo.Reached, owned map[string]bool, opts GCOptions) []GCItem {
	rt := on.Runtime
	found, err := rt.List(ctx, map[string]string{sandbox.LabelRepo: sw.r.Key()})
	if err != nil {
		return []GCItem{{Action: "kept", Container: "*", Reason: "cannot list the containers on " + on.Endpoint.String() + ": " + err.Error()}}
	}
	where := ""
	if def, err := sw.r.Endpoint(ctx); err != nil || def.Address() != on.Endpoint.Address() {
		where = "on " + on.Endpoint.String() + ": "
	}
	var items []GCItem
	for _, c := range found {
		if owned[c.ID] {
			continue
		}
		item := GCItem{Action: "found", Container: c.Name,
			Reason: where + "labelled for " + c.Labels[sandbox.LabelEnv] + ", which no environment owns; `git apex gc --orphans --force` removes it"}
		if opts.Force && !opts.DryRun {
			if err := rt.Remove(ctx, c.ID); err != nil {
				item.Reason = "cannot remove it: " + err.Error()
			} else {
				item.Action, item.Reason = "removed", where+"labelled for "+c.Labels[sandbox.LabelEnv]+", which no environment owns"
			}
		}
		items = append(items, item)
	}
	return items
}

// What names what an item is about, for a table: the identity, else the
// path, else the container.
func (it GCItem) What() string {
	switch {
	case it.Identity != "":
		return it.Identity
	case it.Path != "":
		return it.Path
	}
	return "container " + it.Container
}

// Adopt reports, or with Force adopts, a worktree under the env
// root that no env records.
func (sw *Sweeper) Adopt(ctx context.Context, wt gitx.Worktree, base string, opts GCOptions) GCItem {
	item := GCItem{Action: "found", Path: wt.Path, Reason: "a worktree git-apex does not know; `git apex gc --orphans --force` adopts it"}
	id, err := policy.ParseIdentity(filepath.Base(wt.Path))
	if err != nil {
		item.Reason = "a worktree git-apex does not know, whose name is no identity: adopt it with `git apex start --branch <its branch> <identity>`"
		return item
	}
	if !opts.Force || opts.DryRun {
		return item
	}
	env := &state.Env{Identity: id.String(), Workflow: id.Workflow, Name: id.Name, ModeAsked: string(policy.Worktree),
		Mode: string(policy.Worktree), Path: wt.Path, Branch: wt.Branch, StartCommit: wt.Head, Status: state.Active,
		Metadata: map[string]string{"adopted": "true"}}
	if wt.Branch != "" {
		env.Base = base
	}
	if err := sw.r.Store.Create(ctx, env, "adopted", "by gc: worktree at "+wt.Path); err != nil {
		item.Reason = "cannot adopt it: " + err.Error()
		return item
	}
	item.Action, item.Identity, item.Reason = "adopted", id.String(), "a worktree git-apex did not know, now recorded"
	return item
}

// ForeignGoneHint is what gc and doctor say of a registration whose
// directory is gone but which git-apex did not make: it is left to the
// user, since the directory may have been moved (git-apex never prunes it).
const ForeignGoneHint = "git registers this worktree, whose directory is gone, and git-apex did not make it, so it is left alone: " +
	"if you moved it, run `git worktree repair <its new path>` to keep its index; if you deleted it, `git worktree prune` drops the registration"

// ApexMade reports whether the worktree registered at path is one
// git-apex made: an env's, or one in the pool's directory. Only those do
// gc and doctor ever prune: a worktree the user added by hand may have
// been moved, and pruning its registration would lose its index (git
// itself prunes only when asked). A worktree under the env root that no
// env names is not taken for git-apex's: the user may have added it
// there by hand; one a start cut short left is its intent's, for doctor.
func ApexMade(r *repo.Repo, envs []*state.Env, path string) bool {
	for _, e := range envs {
		if e.Path != "" && hostpath.RealPath(e.Path) == hostpath.RealPath(path) {
			return true
		}
	}
	return hostpath.Within(path, pool.New(r).Dir())
}

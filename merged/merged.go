// Package merged decides which envs' branches are merged into their
// bases (by merge, fast-forward, squash or rebase) for many envs at once,
// with a bounded number of git processes and the state's cache of the
// paths each branch touched. It reads git and that cache and changes
// nothing else: list shows what it finds, sweep removes by it.
package merged

import (
	"context"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// Status is what the merged checks found for one env.
type Status struct {
	Reason string // why its branch counts as merged; "" when it does not
	Kept   string // when not merged: why ("no commits of its own", ...)
}

// Merged reports whether the status says merged.
func (s Status) Merged() bool { return s.Reason != "" }

// Check checks the branches of envs against their bases with a
// bounded number of git processes: given every branch tip, two per
// distinct base (its ref, and ancestry of every branch), then the costly
// squash and rebase checks only where they can matter: for envs whose
// branch touched a path that the base changed, since the commit a merge
// started from (since, from a hook) or else since the env's start commit
// (one diff per distinct start commit). A branch whose work reached the
// base changed those paths there, so nothing merged is missed.
func Check(ctx context.Context, git *gitx.Repo, store *state.Store, envs []*state.Env, branches map[string]gitx.Branch, since string) (map[int64]Status, error) {
	status := make(map[int64]Status)
	var err error
	type baseInfo struct {
		ref       string
		ancestors map[string]string
	}
	bases := map[string]*baseInfo{}
	changed := map[[2]string]map[string]bool{} // paths changed between two commits
	var deep []*state.Env                      // envs that need the costly checks
	var pairs [][2]string                      // their (start, tip), for the touched paths
	for _, e := range envs {
		branch, ok := branches[e.Branch]
		tip := branch.Tip
		switch {
		case e.Branch == "" || e.Base == "":
			status[e.ID] = Status{Kept: "it has no branch or no base"}
			continue
		case !ok:
			status[e.ID] = Status{Kept: "its branch " + e.Branch + " is gone"}
			continue
		case tip == e.StartCommit:
			status[e.ID] = Status{Kept: "no commits of its own"}
			continue
		}
		b := bases[e.Base]
		if b == nil {
			b = &baseInfo{}
			if b.ref, err = git.BaseRef(ctx, e.Base); err != nil {
				return nil, err
			}
			if b.ancestors, err = git.MergedInto(ctx, b.ref); err != nil {
				return nil, err
			}
			bases[e.Base] = b
		}
		if _, ok := b.ancestors[e.Branch]; ok {
			reason, err := git.Merged(ctx, gitx.MergeCheck{Tip: tip, Start: e.StartCommit, Base: b.ref}, true)
			if err != nil {
				return nil, err
			}
			status[e.ID] = mergedOrKept(reason)
			continue
		}
		deep = append(deep, e)
		pairs = append(pairs, [2]string{e.StartCommit, tip})
	}
	touched, err := touchedPaths(ctx, git, store, pairs)
	if err != nil {
		return nil, err
	}
	for i, e := range deep {
		b := bases[e.Base]
		from := since
		if from == "" {
			from = e.StartCommit
		}
		key := [2]string{from, b.ref}
		if changed[key] == nil {
			paths, err := git.ChangedPaths(ctx, from, b.ref)
			if err != nil {
				return nil, err
			}
			changed[key] = map[string]bool{}
			for _, p := range paths {
				changed[key][p] = true
			}
		}
		if !overlaps(touched[i], changed[key]) {
			status[e.ID] = Status{Kept: "not merged"}
			continue
		}
		reason, err := git.Merged(ctx, gitx.MergeCheck{Tip: branches[e.Branch].Tip, Start: e.StartCommit, Base: b.ref}, false)
		if err != nil {
			return nil, err
		}
		status[e.ID] = mergedOrKept(reason)
	}
	return status, nil
}

func mergedOrKept(reason string) Status {
	if reason == "" {
		return Status{Kept: "not merged"}
	}
	return Status{Reason: reason}
}

func overlaps(paths []string, set map[string]bool) bool {
	for _, p := range paths {
		if set[p] {
			return true
		}
	}
	return false
}

// touchedPaths is gitx.TouchedPaths through the state's cache: git reads
// only the spans the cache lacks, and the cache keeps only these spans.
func touchedPaths(ctx context.Context, git *gitx.Repo, store *state.Store, pairs [][2]string) ([][]string, error) {
	spans := make([]state.Span, len(pairs))
	for i, p := range pairs {
		spans[i] = state.Span{Start: p[0], Tip: p[1]}
	}
	known, err := store.Touched(ctx, spans)
	if err != nil {
		return nil, err
	}
	var missing [][2]string
	for i, sp := range spans {
		if _, ok := known[sp]; !ok {
			missing = append(missing, pairs[i])
		}
	}
	if len(missing) > 0 {
		found, err := git.TouchedPaths(ctx, missing)
		if err != nil {
			return nil, err
		}
		fresh := make(map[state.Span][]string, len(missing))
		for i, p := range missing {
			sp := state.Span{Start: p[0], Tip: p[1]}
			fresh[sp], known[sp] = found[i], found[i]
		}
		// A cache that cannot be written (a newer schema, say) only costs time.
		_ = store.SaveTouched(ctx, fresh, spans)
	}
	touched := make([][]string, len(spans))
	for i, sp := range spans {
		touched[i] = known[sp]
	}
	return touched, nil
}

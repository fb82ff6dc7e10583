package isolation

import (
	"context"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// mergeStatus is what the merged checks found for one env.
type mergeStatus struct {
	Reason string // why its branch counts as merged; "" when it does not
	Kept   string // when not merged: why ("no commits of its own", ...)
}

// Merged reports whether the status says merged.
func (s mergeStatus) Merged() bool { return s.Reason != "" }

// mergedEnvs checks the branches of envs against their bases with a
// bounded number of git processes: given every branch tip, two per
// distinct base (its ref, and ancestry of every branch), then the costly
// squash and rebase checks only where they can matter. With since (the
// commit a merge started from) set, those checks run only for envs whose
// branch touched a path the merge brought in; with since "", for every
// env with commits of its own.
func (m *Manager) mergedEnvs(ctx context.Context, envs []*state.Env, branches map[string]gitx.Branch, since string) (map[int64]mergeStatus, error) {
	status := make(map[int64]mergeStatus)
	var err error
	type baseInfo struct {
		ref       string
		ancestors map[string]string
		changed   map[string]bool // paths the merge brought into the base; nil: unknown
	}
	bases := map[string]*baseInfo{}
	var deep []*state.Env // envs that need the costly checks
	var pairs [][2]string // their (start, tip), for the touched paths
	for _, e := range envs {
		branch, ok := branches[e.Branch]
		tip := branch.Tip
		switch {
		case e.Branch == "" || e.Base == "":
			status[e.ID] = mergeStatus{Kept: "it has no branch or no base"}
			continue
		case !ok:
			status[e.ID] = mergeStatus{Kept: "its branch " + e.Branch + " is gone"}
			continue
		case tip == e.StartCommit:
			status[e.ID] = mergeStatus{Kept: "no commits of its own"}
			continue
		}
		b := bases[e.Base]
		if b == nil {
			b = &baseInfo{}
			if b.ref, err = m.Git.BaseRef(ctx, e.Base); err != nil {
				return nil, err
			}
			if b.ancestors, err = m.Git.MergedInto(ctx, b.ref); err != nil {
				return nil, err
			}
			if since != "" {
				paths, err := m.Git.ChangedPaths(ctx, since, b.ref)
				if err != nil {
					return nil, err
				}
				b.changed = map[string]bool{}
				for _, p := range paths {
					b.changed[p] = true
				}
			}
			bases[e.Base] = b
		}
		if _, ok := b.ancestors[e.Branch]; ok {
			reason, err := m.Git.Merged(ctx, gitx.MergeCheck{Tip: tip, Start: e.StartCommit, Base: b.ref}, true)
			if err != nil {
				return nil, err
			}
			status[e.ID] = mergedOrKept(reason)
			continue
		}
		deep = append(deep, e)
		pairs = append(pairs, [2]string{e.StartCommit, tip})
	}
	var touched [][]string
	if since != "" {
		if touched, err = m.Git.TouchedPaths(ctx, pairs); err != nil {
			return nil, err
		}
	}
	for i, e := range deep {
		b := bases[e.Base]
		if touched != nil && !overlaps(touched[i], b.changed) {
			status[e.ID] = mergeStatus{Kept: "not merged"}
			continue
		}
		reason, err := m.Git.Merged(ctx, gitx.MergeCheck{Tip: branches[e.Branch].Tip, Start: e.StartCommit, Base: b.ref}, false)
		if err != nil {
			return nil, err
		}
		status[e.ID] = mergedOrKept(reason)
	}
	return status, nil
}

func mergedOrKept(reason string) mergeStatus {
	if reason == "" {
		return mergeStatus{Kept: "not merged"}
	}
	return mergeStatus{Reason: reason}
}

func overlaps(paths []string, set map[string]bool) bool {
	for _, p := range paths {
		if set[p] {
			return true
		}
	}
	return false
}

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
// branch touched a path that the base changed since the env's start
// commit (one diff per distinct start commit). A branch whose work
// reached the base changed those paths there, so nothing merged is
// missed. What it finds goes into the state's cache of spans, the
// merged verdicts included, for the hooks' cheap filter; envs is every
// live env unless subset, when the cache keeps the spans of the others.
func Check(ctx context.Context, git *gitx.Repo, store *state.Store, envs []*state.Env, branches map[string]gitx.Branch, subset bool) (map[int64]Status, error) {
	status := make(map[int64]Status)
	var err error
	type baseInfo struct {
		ref       string
		ancestors map[string]string
	}
	bases := map[string]*baseInfo{}
	changed := map[[2]string]map[string]bool{} // paths changed between two commits
	var deep []*state.Env                      // envs that need the costly checks
	var spanned []*state.Env                   // envs whose span the cache records
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
		spanned = append(spanned, e)
		if _, ok := b.ancestors[e.Branch]; ok {
			reason, err := git.Merged(ctx, gitx.MergeCheck{Tip: tip, Start: e.StartCommit, Base: b.ref}, true)
			if err != nil {
				return nil, err
			}
			status[e.ID] = mergedOrKept(reason)
			continue
		}
		deep = append(deep, e)
	}
	spans := make([]state.Span, len(spanned))
	for i, e := range spanned {
		spans[i] = state.Span{Start: e.StartCommit, Tip: branches[e.Branch].Tip}
	}
	cache, err := readSpans(ctx, git, store, spans)
	if err != nil {
		return nil, err
	}
	for _, e := range deep {
		b := bases[e.Base]
		key := [2]string{e.StartCommit, b.ref}
		if changed[key] == nil {
			paths, err := git.ChangedPaths(ctx, "", e.StartCommit, b.ref)
			if err != nil {
				return nil, err
			}
			changed[key] = map[string]bool{}
			for _, p := range paths {
				changed[key][p] = true
			}
		}
		sp := state.Span{Start: e.StartCommit, Tip: branches[e.Branch].Tip}
		if !overlaps(cache.known[sp].Paths, changed[key]) {
			status[e.ID] = Status{Kept: "not merged"}
			continue
		}
		reason, err := git.Merged(ctx, gitx.MergeCheck{Tip: sp.Tip, Start: e.StartCommit, Base: b.ref}, false)
		if err != nil {
			return nil, err
		}
		status[e.ID] = mergedOrKept(reason)
	}
	for i, e := range spanned {
		cache.verdict(spans[i], status[e.ID].Reason)
	}
	if !subset {
		cache.current = spans
	}
	// A cache that cannot be written (a newer schema, say) only costs time.
	_ = cache.save(ctx, store)
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

// spanCache is the state's cache of spans as one Check reads and
// changes it. It is written only when something in it changed.
type spanCache struct {
	known   map[state.Span]state.Touch
	changed map[state.Span]state.Touch // to save
	current []state.Span               // the spans to keep; nil: keep all
}

// readSpans reads what the cache knows of spans, and has git read the
// touched paths of the spans it lacks.
func readSpans(ctx context.Context, git *gitx.Repo, store *state.Store, spans []state.Span) (*spanCache, error) {
	known, err := store.Touched(ctx, spans)
	if err != nil {
		return nil, err
	}
	c := &spanCache{known: known, changed: map[state.Span]state.Touch{}}
	var missing [][2]string
	var missingSpans []state.Span
	for _, sp := range spans {
		if _, ok := known[sp]; !ok {
			missing = append(missing, [2]string{sp.Start, sp.Tip})
			missingSpans = append(missingSpans, sp)
		}
	}
	if len(missing) == 0 {
		return c, nil
	}
	found, err := git.TouchedPaths(ctx, missing)
	if err != nil {
		return nil, err
	}
	for i, sp := range missingSpans {
		c.known[sp] = state.Touch{Paths: found[i]}
		c.changed[sp] = c.known[sp]
	}
	return c, nil
}

// verdict records a check's finding on a span.
func (c *spanCache) verdict(sp state.Span, reason string) {
	if t := c.known[sp]; t.Merged != reason {
		t.Merged = reason
		c.known[sp], c.changed[sp] = t, t
	}
}

func (c *spanCache) save(ctx context.Context, store *state.Store) error {
	if len(c.changed) == 0 {
		return nil
	}
	return store.SaveTouched(ctx, c.changed, c.current)
}

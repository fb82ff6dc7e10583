package isolation

import (
	"context"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// makeRoom keeps a new env within [worktree].max_active: when the active
// envs fill the limit, it removes merged, clean envs, oldest first, and
// refuses (exit 3, listing the envs) when that is not enough. Merged
// means the branch's tip is in its base and differs from the commit the
// env started from: a branch with no commits of its own is never merged.
func (m *Manager) makeRoom(ctx context.Context, lk *gitx.Locked, p *plan) error {
	limit := p.policy.Worktree.MaxActive
	if limit == 0 {
		return nil
	}
	envs, err := m.r.Store.Envs(ctx, false)
	if err != nil {
		return err
	}
	var active []*state.Env
	for _, e := range envs {
		if e.Status == state.Active {
			active = append(active, e)
		}
	}
	if len(active) < limit {
		return nil
	}
	mergedByBase := map[string]map[string]string{}
	removed := 0
	for _, e := range active { // oldest first
		if len(active)-removed < limit {
			return nil
		}
		if e.Branch == "" || e.Base == "" {
			continue
		}
		merged, ok := mergedByBase[e.Base]
		if !ok {
			if merged, err = lk.MergedInto(ctx, e.Base); err != nil {
				return err
			}
			mergedByBase[e.Base] = merged
		}
		if tip, ok := merged[e.Branch]; !ok || tip == e.StartCommit {
			continue
		}
		if _, err := m.RemoveLocked(ctx, lk, e, RemoveOptions{DeleteBranch: p.policy.Worktree.DeleteMergedBranches, BranchMerged: true}); err != nil {
			if exitcode.Of(err) == exitcode.Refused {
				continue // not clean: it stays
			}
			return err
		}
		m.r.Notef("removed %s, merged into %s, to stay within max_active = %d", e.Identity, e.Base, limit)
		removed++
	}
	if len(active)-removed < limit {
		return nil
	}
	var names []string
	for _, e := range active {
		if e.Live() {
			names = append(names, e.Identity)
		}
	}
	return exitcode.New(exitcode.Refused, "cannot start %s: %d environments are active and the limit ([worktree].max_active) is %d; none of them is both merged and clean: %s; remove or finish one first",
		p.id, len(active)-removed, limit, strings.Join(names, ", "))
}

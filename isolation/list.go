package isolation

import (
	"context"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/git-apex/git-apex/cleanstat"
	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/merged"
	"github.com/git-apex/git-apex/planted"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
)

// Listed is an env with the links that resolve to it and, for a live
// env, what git says of it.
type Listed struct {
	Env     *state.Env
	Links   []state.Link
	Changes *gitx.Changes // uncommitted work; nil when unknown
	Counted bool          // Ahead and Behind are known
	Ahead   int           // commits on its branch that its base lacks
	Behind  int           // commits on its base that its branch lacks
	Merged  string        // why its branch counts as merged; "" when not
	// Container is the state of a full env's container: running, exited,
	// missing, ...; "unknown" when no runtime answers.
	Container string
	Problem   string // what could not be read
	// Missing is set when its worktree directory is gone (moved with
	// plain mv, or deleted): it is left as it is until repaired.
	Missing bool
}

// List returns the envs with their links, oldest first, after healing
// them against git; destroyed ones too when all is set.
func (m *Manager) List(ctx context.Context, all bool) ([]Listed, error) {
	envs, err := m.r.Store.Envs(ctx, all)
	if err != nil {
		return nil, err
	}
	return m.listed(ctx, envs, all, false)
}

// Get is List for the env an identity names: its live env, its own or
// through a link, else its latest destroyed one; not found (exit 7) when
// it never had one.
func (m *Manager) Get(ctx context.Context, identity string) (Listed, error) {
	env, err := m.r.Find(ctx, identity)
	if err != nil {
		return Listed{}, err
	}
	listed, err := m.listed(ctx, []*state.Env{env}, true, true)
	if err != nil {
		return Listed{}, err
	}
	return listed[0], nil
}

// listed heals envs against git and describes them, with their links;
// destroyed ones are dropped unless all is set. subset says envs are not
// all the live ones.
func (m *Manager) listed(ctx context.Context, envs []*state.Env, all, subset bool) ([]Listed, error) {
	worktrees, err := m.r.Git.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	refused, err := heal.All(ctx, m.r, nil, envs, worktrees)
	if err != nil {
		return nil, err
	}
	links, err := m.r.Store.Links(ctx)
	if err != nil {
		return nil, err
	}
	var listed []Listed
	for _, env := range envs {
		if all || env.Live() {
			missing := env.Live() && env.Mode != string(policy.Shared) && !hostpath.Exists(env.Path)
			listed = append(listed, Listed{Env: env, Links: links[env.ID], Problem: refused[env.ID], Missing: missing})
		}
	}
	return listed, m.describe(ctx, listed, subset)
}

// describe fills in what git says of the live envs: merged (with a
// bounded number of git processes for all of them), then uncommitted
// work and ahead/behind, by a few workers at once. subset says listed
// are not all the live envs.
func (m *Manager) describe(ctx context.Context, listed []Listed, subset bool) error {
	var live []*state.Env
	liveIDs := map[int64]bool{} // the status cache keeps only these
	for _, l := range listed {
		if l.Env.Live() {
			live, liveIDs[l.Env.ID] = append(live, l.Env), true
		}
	}
	if len(live) == 0 {
		return nil
	}
	branches, err := m.r.Git.Branches(ctx, false)
	if err != nil {
		return err
	}
	status, err := merged.Check(ctx, m.r.Git, m.r.Store, live, branches, subset)
	if err != nil {
		return err
	}
	// Each full env's container is looked for on the engine it was made
	// on: one connection per engine, made before the workers start.
	engines := map[string]container.Runtime{}
	for _, e := range live {
		if _, ok := engines[e.Engine]; !ok && e.Mode == string(policy.Full) {
			engines[e.Engine], _, _ = m.r.Engine(ctx, e.Engine)
		}
	}
	more := m.r.Personal(ctx).StatusFiles
	var g errgroup.Group
	g.SetLimit(2 * runtime.NumCPU())
	for i := range listed {
		l := &listed[i]
		if !l.Env.Live() {
			continue
		}
		l.Merged = status[l.Env.ID].Reason
		_, baseIsLocal := branches[l.Env.Base]
		g.Go(func() error {
			if l.Env.Mode == string(policy.Full) {
				l.Container = "unknown"
				if rt := engines[l.Env.Engine]; rt != nil {
					if info, err := rt.Inspect(ctx, l.Env.Container); err == nil {
						l.Container = info.State
					}
				}
			}
			if l.Problem != "" {
				return nil // healing found git must not run there
			}
			return m.status(ctx, l, baseIsLocal, more)
		})
	}
	err = g.Wait()
	if !subset {
		cleanstat.In(m.r.Git.ApexDir()).Prune(liveIDs)
	}
	return err
}

// status fills in l's uncommitted work and ahead/behind from git status,
// or, for a worktree env, from the status cache when nothing git status
// reads has changed since it last found the tree clean.
func (m *Manager) status(ctx context.Context, l *Listed, baseIsLocal bool, more []string) error {
	e, statuses := l.Env, cleanstat.In(m.r.Git.ApexDir())
	cached := e.Mode == string(policy.Worktree) && e.Branch != "" && e.Base != ""
	var snap cleanstat.Snapshot
	if cached {
		snap = cleanstat.Take(cleanstat.Tree{Dir: e.Path, CommonDir: m.r.Git.CommonDir, Branch: e.Branch, Base: e.Base,
			Remote: !baseIsLocal, More: more})
		if c, ok := statuses.Lookup(e.ID, snap); ok {
			l.Changes, l.Counted, l.Ahead, l.Behind = &gitx.Changes{}, c.Counted, c.Ahead, c.Behind
			return nil
		}
	}
	if e.Contained() {
		ctx = gitx.Bound(ctx, e.Path, e.Identity, gitx.ContainedLimit)
	}
	st, err := m.r.Git.Status(ctx, e.Path, gitx.StatusOptions{Branch: e.Branch, Base: e.Base,
		BaseIsLocal: baseIsLocal, Contained: e.Contained()})
	if err != nil {
		l.Problem = err.Error()
		return nil
	}
	l.Changes, l.Counted, l.Ahead, l.Behind = &st.Changes, st.Counted, st.Ahead, st.Behind
	if e.Contained() { // at no cost: git status named the directories
		planted.Warn(m.r, e, sandbox.OfEnv(m.r, e).Dir(), st.UntrackedPaths)
	}
	if cached {
		statuses.Keep(e.ID, snap, !st.Dirty(), cleanstat.Counts{Counted: st.Counted, Ahead: st.Ahead, Behind: st.Behind})
	}
	return nil
}

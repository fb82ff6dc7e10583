package isolation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-apex/git-apex/envexec"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/intent"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/ports"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/setup"
	"github.com/git-apex/git-apex/state"
)

// StartRequest is what `git apex start` asks for.
type StartRequest struct {
	Identity  policy.Identity
	Isolation policy.Mode // the --isolation flag; "" when not given
	From      string      // --from: a branch (which becomes the base) or any commit-ish
	Branch    string      // --branch: overrides the policy's branch template
	Strict    bool        // --strict: never fall back from the asked mode
	Detach    bool        // --detach: check out the start commit with no branch
	Parent    string      // --parent: share this identity's env instead of making one
	// NoAdopt refuses (exit 3) rather than record as the env a worktree
	// made without git-apex that has the branch checked out: a restore
	// writes files into the env it starts, and must write only into one
	// it made.
	NoAdopt bool
	// Metadata is recorded with an env start makes (an API's story, say);
	// a reused env keeps its own.
	Metadata map[string]string
}

// StartResult is the env start made or found.
type StartResult struct {
	Env     *state.Env
	Reused  bool // it existed already; nothing was created
	Adopted bool // an existing worktree was recorded as the env
	Pooled  bool // it was made from a warm pool slot
}

// A start is decided in three steps, each returning what it found:
// plan reads the policy (no git), check reads git under the repository
// lock (a target), and create makes the env (a provider returns what it
// made, with its undo) and records it.

// plan is what the policy says of a start.
type plan struct {
	req         StartRequest
	id          policy.Identity
	policy      *policy.Policy
	asked, mode policy.Mode
	strict      bool   // never fall back from the asked mode
	fallback    string // why the env gets a weaker mode than asked
	path        string
	branch      string
	port        string            // the first of the env's port block, once picked
	request     string            // the number of the pull request to check out (start pr 99), or ""
	pull        *gitx.PullRequest // the request, once fetched
}

// target is what check found in git for a plan.
type target struct {
	path         string // the plan's, or the adopted worktree's
	base         string
	start        string // the commit the env starts from
	branchExists bool
	tip          string          // an existing branch's commit
	main         gitx.Worktree   // the main checkout
	worktrees    []gitx.Worktree // every worktree, as git listed them
	adopt        *gitx.Worktree  // an existing worktree on the branch, to record as the env
	recreate     bool            // the identity's env was deleted by hand and is made again
}

// made is what a provider made for a start.
type made struct {
	undo      func(context.Context) error // removes all of it; nil when nothing was made
	container string                      // a full env's container
	engine    string                      // the record of the engine it is on (state.Env.Engine)
	pooled    bool                        // the worktree came from a warm pool slot
}

// Start returns the identity's env, making it when it has none (or when
// its directory was deleted by hand). An identity that is a link gets the
// env it links to. Concurrent starts of one identity make one env: the
// check is repeated under the repository lock.
func (m *Manager) Start(ctx context.Context, req StartRequest) (*StartResult, error) {
	id := req.Identity.String()
	if res, err := m.reuse(ctx, id); res != nil || err != nil {
		return res, err
	}
	if req.Parent != "" {
		return m.startChild(ctx, req)
	}
	p, err := m.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := m.startLocked(ctx, p)
	if err != nil || res.Reused || res.Adopted {
		return res, err
	}
	if res.Pooled && p.policy.Pool.Size > 0 {
		m.pool.TopUp()
	}
	return res, setup.Prepare(ctx, m.r, res.Env, p.policy, envexec.Commands(m.r, nil, res.Env), envexec.Files(m.r, res.Env))
}

// startLocked finds or makes the planned env under the repository lock.
func (m *Manager) startLocked(ctx context.Context, p *plan) (*StartResult, error) {
	id := p.id.String()
	lk, err := m.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if err := m.fetchRequest(ctx, lk, p); err != nil {
		return nil, err
	}
	worktrees, refs, err := inspect(ctx, lk, p.refNames())
	if err != nil {
		return nil, err
	}
	env, _, err := m.r.Store.Resolve(ctx, id)
	if err != nil {
		return nil, err
	}
	recreate := false
	if env != nil {
		if err := refuseUnfound(m.r, env, worktrees); err != nil {
			return nil, err
		}
		if _, _, err := heal.One(ctx, m.r, lk, env, worktrees); err != nil {
			return nil, err
		}
		if env.Live() {
			return m.reuse(ctx, id)
		}
		m.r.Notef("recreating %s", id)
		recreate = true
		if worktrees, refs, err = inspect(ctx, lk, p.refNames()); err != nil {
			return nil, err
		}
	}
	t, err := m.check(ctx, p, worktrees, refs)
	if err != nil {
		return nil, err
	}
	t.recreate = recreate
	if err := m.makeRoom(ctx, lk, p); err != nil {
		return nil, err
	}
	return m.create(ctx, lk, p, t)
}

// reuse returns the live env an identity names when its directory is
// there, recording the reuse; nil when there is none to reuse.
func (m *Manager) reuse(ctx context.Context, id string) (*StartResult, error) {
	env, link, err := m.r.Store.Resolve(ctx, id)
	if err != nil || env == nil || !hostpath.Exists(env.Path) {
		return nil, err
	}
	detail := ""
	if link != nil {
		m.r.Notef("linked to existing environment %s", env.Identity)
		detail = "as " + id
	}
	return &StartResult{Env: env, Reused: true}, m.r.Store.Record(ctx, env, "reused", detail)
}

// startChild makes a new identity a sub-task of its parent: a link, of
// kind parent, to the parent's env.
func (m *Manager) startChild(ctx context.Context, req StartRequest) (*StartResult, error) {
	pol, err := m.r.Policy()
	if err != nil {
		return nil, err
	}
	if err := pol.CheckWorkflow(req.Identity.Workflow); err != nil {
		return nil, err
	}
	lk, err := m.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if res, err := m.reuse(ctx, req.Identity.String()); res != nil || err != nil {
		return res, err
	}
	parent, _, err := m.r.Resolve(ctx, req.Parent)
	if err != nil {
		return nil, err
	}
	if err := m.r.Store.AddLink(ctx, req.Identity.String(), parent, state.KindParent, req.Parent); err != nil {
		return nil, err
	}
	m.r.Notef("%s shares the environment of its parent %s", req.Identity, parent.Identity)
	return &StartResult{Env: parent, Reused: true}, nil
}

// inspect reads git's worktrees and the named refs, in parallel: each
// git process costs about as much as the work of start itself.
func inspect(ctx context.Context, lk *gitx.Locked, names []string) ([]gitx.Worktree, map[string]gitx.Ref, error) {
	var worktrees []gitx.Worktree
	var listErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		worktrees, listErr = lk.Worktrees(ctx)
	}()
	refs, refsErr := lk.Refs(ctx, names...)
	<-done
	return worktrees, refs, errors.Join(listErr, refsErr)
}

// plan resolves what the policy says for a start; it runs no git. For
// full isolation it makes sure of the runtime and the image (pulling it),
// before the repository lock, and falls back to worktree when it cannot.
func (m *Manager) plan(ctx context.Context, req StartRequest) (*plan, error) {
	mainRoot := m.r.Git.MainRoot()
	pol, err := m.r.Policy()
	if err != nil {
		return nil, err
	}
	id := req.Identity
	if err := pol.CheckWorkflow(id.Workflow); err != nil {
		return nil, err
	}
	p := &plan{req: req, id: id, policy: pol}
	p.asked = pol.Mode(id.Workflow, req.Isolation)
	p.mode = p.asked
	p.strict = req.Strict || pol.Isolation.Strict
	if p.asked == policy.Full {
		if reason := sandbox.Ready(ctx, m.r, pol); reason != "" {
			if p.strict {
				return nil, strictFull(id, reason)
			}
			p.mode, p.fallback = policy.Worktree, reason
		}
	}
	switch {
	case req.Detach || pol.Workflow[id.Workflow].Detach:
		if req.Branch != "" {
			return nil, exitcode.New(exitcode.Usage, "cannot use --branch with a detached start: a detached environment has no branch")
		}
	case req.Branch != "":
		if err := policy.CheckBranchName(req.Branch); err != nil {
			return nil, exitcode.New(exitcode.Usage, "%v", err)
		}
		p.branch = req.Branch
	default:
		if p.branch, err = pol.Branch(id, m.r.Git.Name); err != nil {
			return nil, err
		}
	}
	if slices.Contains(requestWorkflows, id.Workflow) && req.From == "" && isNumber(id.Name) {
		p.request = id.Name
	}
	p.path = mainRoot
	if p.mode != policy.Shared {
		// The user's own apex.root needs no approval: it is not the
		// policy's choice.
		root := m.r.Personal(ctx).Root
		if p.path, err = pol.EnvPath(root, mainRoot, m.r.Git.Name, m.r.Git.CommonDir, id, p.branch); err != nil {
			return nil, err
		}
		if err := m.r.CheckEnvPath(pol, p.path, root != "", p.mode == policy.Full); err != nil {
			return nil, err
		}
		// Full needs a worktree too: without one it falls back past
		// worktree, to shared.
		if reason := hostpath.Unwritable(filepath.Dir(p.path)); reason != "" {
			if p.strict {
				return nil, exitcode.New(exitcode.Git, "cannot make a worktree for %s: %s; strict mode forbids falling back to shared", id, reason)
			}
			p.mode, p.path = policy.Shared, mainRoot
			p.fallback = strings.TrimPrefix(p.fallback+"; then ", "; then ") + "no worktree can be made: " + reason
		}
	}
	if p.mode == policy.Shared && m.r.Git.Bare {
		return nil, exitcode.New(exitcode.Usage, "cannot start %s in shared isolation%s: %s is a bare repository, with no main checkout to share; use --isolation worktree or full", id, strings.TrimPrefix(" ("+p.fallback+")", " ()"), mainRoot)
	}
	return p, nil
}

// requestWorkflows are the workflows whose numbered names are pull or
// merge requests: `start pr 99` checks out request 99.
var requestWorkflows = []string{"pr", "review"}

func isNumber(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// fetchRequest fetches the plan's pull request, when it names one, from
// [requests].remote (else origin, else the only remote). A repository
// with no remote has nothing to fetch: the env starts from its base, and
// says so.
func (m *Manager) fetchRequest(ctx context.Context, lk *gitx.Locked, p *plan) error {
	if p.request == "" {
		return nil
	}
	remote, err := lk.RequestRemote(ctx, p.policy.Requests.Remote)
	if err != nil || remote == "" {
		if err == nil {
			m.r.Notef("no remote to fetch request %s from: %s starts from its base", p.request, p.id)
		}
		return err
	}
	pr, err := lk.FetchPullRequest(ctx, remote, p.request, p.policy.Requests.Hosts())
	if err != nil {
		return err
	}
	p.pull = pr
	return nil
}

// refNames are the refs check needs: the branch, the candidate bases and
// the remote's default branch.
func (p *plan) refNames() []string {
	names := []string{"refs/remotes/origin/HEAD"}
	if p.branch != "" {
		names = append(names, "refs/heads/"+p.branch)
	}
	bases := []string{p.req.From, p.policy.Base(p.id.Workflow)}
	if p.pull != nil && p.pull.Target != "" {
		bases = append(bases, p.pull.Target, p.pull.Remote+"/"+p.pull.Target)
	}
	for _, b := range bases {
		if b != "" {
			names = append(names, "refs/heads/"+b, "refs/remotes/"+b)
		}
	}
	return names
}

// check finds the plan's target in git (the base and start commit) and
// refuses what would clash with existing work.
func (m *Manager) check(ctx context.Context, p *plan, worktrees []gitx.Worktree, refs map[string]gitx.Ref) (target, error) {
	t := target{path: p.path, main: worktrees[0], worktrees: worktrees}
	tip, exists := refs["refs/heads/"+p.branch]
	t.branchExists, t.tip = exists, tip.Hash
	var err error
	if t.base, t.start, err = resolveBase(ctx, m.r.Git, p, worktrees, refs); err != nil {
		return t, err
	}
	id := p.id
	if p.branch != "" {
		holder, err := m.r.Store.BranchHolder(ctx, p.branch)
		if err != nil {
			return t, err
		}
		if holder != nil {
			return t, exitcode.New(exitcode.Refused, "cannot start %s: branch %s belongs to environment %s (%s); pick another name or pass --branch",
				id, p.branch, holder.Identity, holder.Path)
		}
	}
	holderWt, checkedOut := gitx.WorktreeOnBranch(worktrees, p.branch)
	switch {
	case p.mode == policy.Shared:
		if checkedOut && holderWt.Path != t.main.Path {
			return t, exitcode.New(exitcode.Refused, "cannot start %s in the main checkout: branch %s is checked out in the worktree %s", id, p.branch, holderWt.Path)
		}
	case checkedOut && holderWt.Path == t.main.Path:
		return t, exitcode.New(exitcode.Refused, "cannot start %s: branch %s is checked out in the main checkout %s; switch it to another branch, or use --isolation shared", id, p.branch, holderWt.Path)
	case checkedOut && p.req.NoAdopt:
		return t, exitcode.New(exitcode.Refused, "cannot start %s: branch %s is checked out in the worktree %s, which git-apex did not make", id, p.branch, holderWt.Path)
	case checkedOut:
		// A worktree made without git-apex: record it as it is.
		t.adopt, t.path = &holderWt, holderWt.Path
	case hostpath.Exists(p.path):
		return t, exitcode.New(exitcode.Refused, "cannot start %s: %s already exists and is not an environment git-apex knows; move it away, or remove it if it holds nothing you need", id, p.path)
	}
	return t, nil
}

// resolveBase returns a plan's base and start commit. The base is --from
// when it names a branch, else the workflow's base, else [worktree].base,
// else the default branch of the remote "origin", else the main
// checkout's branch. A --from that is not a branch sets only the start.
func resolveBase(ctx context.Context, git *gitx.Repo, p *plan, worktrees []gitx.Worktree, refs map[string]gitx.Ref) (base, start string, err error) {
	req, pol := p.req, p.policy
	policyBase := pol.Base(req.Identity.Workflow)
	// branchRef finds a local or remote-tracking branch by short name.
	branchRef := func(name string) (gitx.Ref, bool) {
		if r, ok := refs["refs/heads/"+name]; ok {
			return r, true
		}
		r, ok := refs["refs/remotes/"+name]
		return r, ok
	}
	if req.From != "" {
		if r, ok := branchRef(req.From); ok {
			return req.From, r.Hash, nil
		}
		if start, err = git.Commit(ctx, req.From); err != nil {
			return "", "", err
		}
	}
	if p.pull != nil {
		// A pull request starts at its head, and its base is the branch
		// it merges into when that is known here.
		start = p.pull.Head
		if t := p.pull.Target; t != "" {
			for _, name := range []string{t, p.pull.Remote + "/" + t} {
				if _, ok := branchRef(name); ok {
					return name, start, nil
				}
			}
		}
	}
	var tip string
	switch {
	case policyBase != "":
		r, ok := branchRef(policyBase)
		if !ok {
			return "", "", exitcode.New(exitcode.Usage, "cannot use base branch %q named in %s: no such branch; create it, or change the policy", policyBase, pol.File)
		}
		base, tip = policyBase, r.Hash
	case refs["refs/remotes/origin/HEAD"].Target != "":
		remote := strings.TrimPrefix(refs["refs/remotes/origin/HEAD"].Target, "refs/remotes/")
		local := strings.TrimPrefix(remote, "origin/")
		more, err := git.Refs(ctx, "refs/heads/"+local, "refs/remotes/"+remote)
		if err != nil {
			return "", "", err
		}
		r, ok := more["refs/heads/"+local]
		base = local
		if !ok {
			r, base = more["refs/remotes/"+remote], remote
		}
		tip = r.Hash
	case worktrees[0].Branch != "":
		base, tip = worktrees[0].Branch, worktrees[0].Head
	default:
		return "", "", exitcode.New(exitcode.Usage, "cannot choose a base for %s: the main checkout is on a detached HEAD and no base is configured; pass --from <branch> or set [worktree].base", req.Identity)
	}
	if start == "" {
		start = tip
	}
	return base, start, nil
}

// create makes the planned env and records it. On any failure it undoes
// what it made, so that nothing is left that was not there before.
func (m *Manager) create(ctx context.Context, lk *gitx.Locked, p *plan, t target) (*StartResult, error) {
	env := &state.Env{
		Identity: p.id.String(), Workflow: p.id.Workflow, Name: p.id.Name,
		ModeAsked: string(p.asked), Mode: string(p.mode), Path: t.path, Branch: p.branch,
		Base: t.base, StartCommit: t.start, Status: state.Active, Metadata: maps.Clone(p.req.Metadata),
	}
	if env.Metadata == nil {
		env.Metadata = map[string]string{}
	}
	live, err := m.r.Store.Envs(ctx, false)
	if err != nil {
		return nil, err
	}
	if p.port = ports.Pick(env.Identity, live); p.port != "" {
		env.Metadata[state.PortKey] = p.port
	}
	if p.pull != nil {
		env.Metadata["request"] = p.pull.Remote + " " + p.pull.Ref
	}
	if t.adopt != nil {
		env.StartCommit = t.adopt.Head
		env.Metadata["adopted"] = "true"
		if err := m.r.Store.Create(ctx, env, "adopted", "worktree at "+t.path); err != nil {
			return nil, err
		}
		m.r.Notef("adopted the existing worktree %s for %s", t.path, env.Identity)
		return &StartResult{Env: env, Adopted: true}, nil
	}
	in := &intent.Intent{Op: "start", Identity: env.Identity, Path: t.path, Branch: p.branch,
		NewBranch: p.branch != "" && !t.branchExists, Start: t.start, Base: t.base}
	if p.mode == policy.Full {
		if ep, err := m.r.Endpoint(ctx); err == nil { // connected by sandbox.Ready
			in.Engine = ep.Record()
		}
	}
	if p.mode == policy.Shared {
		// Checked before the intent, which says the checkout was clean:
		// doctor --fix then knows every change in it is the switch's.
		if err := sharedClean(ctx, lk, p, t); err != nil {
			return nil, err
		}
		in.Shared, in.FromBranch, in.FromHead, in.Target = true, t.main.Branch, t.main.Head, t.start
		if t.branchExists {
			in.Target = t.tip
		}
	}
	if err := intent.Write(intent.Dir(m.r.Git.ApexDir()), in); err != nil {
		return nil, err
	}
	var got made
	if p.mode == policy.Worktree {
		got, err = m.fromSlot(ctx, lk, p, t)
	}
	if !got.pooled && err == nil {
		got, err = m.provider(p.mode).create(ctx, lk, p, t)
	}
	mode, fallback := p.mode, p.fallback
	if err != nil && isContainerError(err) && !p.strict {
		// The worktree is made; only its container failed: keep the worktree.
		mode, fallback, err = policy.Worktree, err.Error(), nil
		env.Mode = string(mode)
	} else if err != nil && isContainerError(err) {
		err = strictFull(p.id, err.Error())
	}
	env.Container, env.Engine = got.container, got.engine
	if err == nil {
		kind, from := "created", ""
		if t.recreate {
			kind = "recreated"
		}
		if got.pooled {
			from = " (from a warm pool slot)"
		}
		err = m.r.Store.Create(ctx, env, kind, fmt.Sprintf("%s at %s from %s%s", mode, t.path, repo.Short(t.start), from))
		if errors.Is(err, state.ErrBranchTaken) || errors.Is(err, state.ErrIdentityTaken) {
			err = exitcode.New(exitcode.Refused, "cannot record %s: %v", env.Identity, err)
		}
	}
	if err != nil {
		if got.undo != nil {
			// Undo even when interrupted: a half-made env is worse than a late exit.
			if uerr := got.undo(context.WithoutCancel(ctx)); uerr != nil {
				// The intent stays: `git apex doctor --fix` finishes the undo.
				m.r.Warnf("could not undo everything made for %s: %v; `git apex doctor --fix` finishes it", env.Identity, uerr)
				return nil, err
			}
		}
		in.Done()
		return nil, err
	}
	in.Done()
	if p.branch == "" {
		m.r.Notef("reviewing at commit %s", t.start[:min(7, len(t.start))])
	}
	if fallback != "" {
		m.r.Warnf("%s asked for %s isolation but gets %s: %s", env.Identity, p.asked, mode, fallback)
		if err := m.r.Store.Save(ctx, env, "fallback", fmt.Sprintf("%s -> %s: %s", p.asked, mode, fallback)); err != nil {
			return nil, err
		}
	}
	return &StartResult{Env: env, Pooled: got.pooled}, nil
}

// refuseUnfound refuses (exit 3) to start an identity again whose
// worktree directory is gone while git still registers it, when it is
// not found where heal.FindMoved looks: it may have been moved with plain
// mv anywhere, and dropping the registration would lose its index (what
// was staged) and leave the moved directory's .git file naming the new
// worktree's. The env stays, shown missing; the user repairs it or
// removes it.
func refuseUnfound(r *repo.Repo, env *state.Env, worktrees []gitx.Worktree) error {
	d := heal.Diagnose(r, env, worktrees)
	if d.Kind != heal.Gone || !d.Found {
		return nil
	}
	if _, ok := heal.FindMoved(r.Git, env.Path); ok {
		return nil
	}
	return exitcode.New(exitcode.Refused, "refusing to start %s again: %s, with its index (what was staged); %s",
		env.Identity, d.Describe(env), heal.MissingHint(env))
}

package isolation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
)

// Finding is one line of doctor's report.
type Finding struct {
	Check  string `json:"check"`  // what was looked at
	Status string `json:"status"` // ok, problem or fixed
	Detail string `json:"detail"`
}

// Doctor compares the state, git and the file system and reports where
// they drift apart. With fix it repairs what is safe: envs whose
// worktree was deleted, moved or switched by hand, and git's
// registrations of deleted worktrees. Unknown worktrees, directories that
// are no longer worktrees and git's lock files are only reported.
func (m *Manager) Doctor(ctx context.Context, fix bool) ([]Finding, error) {
	var out []Finding
	add := func(check, status, format string, args ...any) {
		out = append(out, Finding{Check: check, Status: status, Detail: fmt.Sprintf(format, args...)})
	}
	version, err := m.Store.Version(ctx)
	if err != nil {
		return nil, err
	}
	if version > state.SchemaVersion {
		add("state", "problem", "schema version %d is newer than this git-apex writes (%d): upgrade git-apex", version, state.SchemaVersion)
	} else {
		add("state", "ok", "schema version %d at %s", version, filepath.Join(m.Git.ApexDir(), "state.db"))
	}
	pol, err := m.Policy()
	if err != nil {
		add("policy", "problem", "%v", err)
		pol = policy.Default()
	} else {
		add("policy", "ok", "%s", pick(pol.File == "", "(built-in defaults)", pol.File))
	}
	switch version, err := m.RuntimeVersion(ctx); {
	case err == nil:
		add("container runtime", "ok", "Docker Engine %s", version)
	case asksFull(pol):
		add("container runtime", "problem", "the policy asks for full isolation, but %v: those environments fall back to worktrees", err)
	default:
		add("container runtime", "ok", "none answers, and the policy asks for no full isolation (%v)", err)
	}

	lk, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	recovered, err := m.recoverCrashes(ctx, lk, fix)
	if err != nil {
		return nil, err
	}
	out = append(out, recovered...)
	worktrees, envs, err := m.snapshot(ctx, lk)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, e := range envs {
		d := m.diagnose(e, worktrees)
		known[realPath(e.Path)] = true
		switch {
		case d.kind == driftNone:
		case d.kind == driftGitfile && fix:
			if err := lk.RestoreGitfile(d.worktree.Path); err != nil {
				add(e.Identity, "problem", "%s; cannot restore it: %v", d.describe(e), err)
			} else {
				add(e.Identity, "fixed", "%s; restored it", d.describe(e))
			}
		case d.kind == driftGitfile:
			add(e.Identity, "problem", "%s; git-apex runs no git there until `git apex doctor --fix` restores it", d.describe(e))
		case fix && d.kind != driftStranger:
			detail := d.describe(e)
			if err := m.apply(ctx, lk, e, d); err != nil {
				return nil, err
			}
			add(e.Identity, "fixed", "%s", detail)
		case d.kind == driftStranger:
			add(e.Identity, "problem", "%s; look inside it, move it away, then run `git apex doctor --fix`", d.describe(e))
		default:
			add(e.Identity, "problem", "%s; `git apex doctor --fix` repairs the record", d.describe(e))
		}
	}
	out = append(out, m.checkContainers(ctx, envs, fix)...)
	root := envRoot(pol, m.Git.MainRoot())
	for _, wt := range worktrees[1:] {
		switch {
		case wt.Prunable && !wt.Locked && !known[realPath(wt.Path)]: // an env's own is repaired with it
			add("worktree "+wt.Path, pick(fix, "fixed", "problem"), "git still registers this deleted worktree; %s",
				pick(fix, "pruned", "`git apex doctor --fix` prunes it"))
		case !known[realPath(wt.Path)] && within(wt.Path, root) && !wt.Prunable:
			add("worktree "+wt.Path, "problem", "a worktree under the environment root that git-apex does not know; `git apex gc --orphans --force` adopts it")
		}
	}
	if fix {
		// Registrations of deleted worktrees, locked ones excepted.
		if err := lk.Prune(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// asksFull reports whether any workflow's mode resolves to full.
func asksFull(pol *policy.Policy) bool {
	for _, w := range pol.Workflows() {
		if pol.Mode(w, "") == policy.Full {
			return true
		}
	}
	return false
}

// checkContainers reports full envs whose container is gone; with fix it
// makes them again.
func (m *Manager) checkContainers(ctx context.Context, envs []*state.Env, fix bool) []Finding {
	rt, err := m.runtime(ctx)
	if err != nil {
		return nil
	}
	var out []Finding
	for _, e := range envs {
		if e.Mode != string(policy.Full) || !e.Live() {
			continue
		}
		info, err := rt.Inspect(ctx, e.Container)
		st := info.State
		switch {
		case err != nil:
			out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: "cannot inspect its container: " + err.Error()})
		case st == "missing" && fix:
			if _, err := m.remakeContainer(ctx, e); err != nil {
				out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: err.Error()})
			} else {
				out = append(out, Finding{Check: e.Identity, Status: "fixed", Detail: "its container was deleted by hand; made it again"})
			}
		case st == "missing":
			out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: "its container was deleted by hand; `git apex doctor --fix` or `git apex exec` makes it again"})
		}
	}
	return out
}

// RebuildState is `doctor --fix` for a damaged state database (see
// state.DamagedError): it moves the database aside, keeping it for
// whoever wants to look, and makes a new one with what git still knows:
// the worktrees under the environment root whose directory names are
// identities become worktree environments again, and the clean worktrees
// under the pool's directory idle slots. Links, the event log and the
// containers of full environments cannot be read back from git; the
// findings say so, and name the worktrees it could not adopt.
func RebuildState(ctx context.Context, dir string, opts Options) ([]Finding, error) {
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	db := filepath.Join(repo.ApexDir(), "state.db")
	aside := db + ".damaged-" + time.Now().UTC().Format("20060102-150405")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(db+suffix, aside+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot move the damaged state database aside: %w", err)
		}
	}
	m, err := newManager(ctx, repo, opts)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	pol, err := m.Policy()
	if err != nil {
		pol = policy.Default()
	}
	lk, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	var rebuilt []string
	var out []Finding
	root := envRoot(pol, m.Git.MainRoot())
	for _, wt := range worktrees[1:] {
		switch {
		case wt.Prunable:
		case within(wt.Path, m.poolDir()):
			// A slot is reset when leased: one with changes (a failed batch
			// task kept with --keep-failed) is not made a slot again.
			if changes, err := lk.Status(ctx, wt.Path, true); err != nil || changes.Dirty() {
				out = append(out, Finding{Check: "worktree " + wt.Path, Status: "problem",
					Detail: "not rebuilt as a pool slot: it has changes (a failed batch task kept with --keep-failed?); look inside, then `git worktree remove` it"})
				continue
			}
			if _, err := m.Store.AddSlot(ctx, wt.Path, wt.Head, 0, 0); err != nil {
				return nil, err
			}
			rebuilt = append(rebuilt, "pool slot "+filepath.Base(wt.Path))
		case within(wt.Path, root):
			item := m.unknownWorktree(ctx, wt, worktrees[0].Branch, GCOptions{Force: true})
			if item.Action == "adopted" {
				rebuilt = append(rebuilt, item.Target)
			} else {
				out = append(out, Finding{Check: "worktree " + wt.Path, Status: "problem", Detail: "not rebuilt: " + item.Reason})
			}
		}
	}
	detail := fmt.Sprintf("the damaged database is kept as %s; rebuilt from git: %s. Not rebuilt (git does not hold them): links, the event log, and full environments' containers (`git apex gc --orphans` lists them)",
		aside, pick(len(rebuilt) == 0, "nothing", strings.Join(rebuilt, ", ")))
	return append([]Finding{{Check: "state", Status: "fixed", Detail: detail}}, out...), nil
}

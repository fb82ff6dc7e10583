// Package doctor checks where the state, git, the file system and the
// container engine disagree, and with fix repairs what is safe: drift
// (through heal), what killed processes left (intents, pool leftovers,
// orphan sandboxes, stale git locks), missing containers, a damaged state
// database (rebuilt from git), what a container planted that git would
// obey, special files where git opens its own, and the git hooks. It
// reports; it never removes anyone's work.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/planted"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/sweep"
	"github.com/git-apex/git-apex/trap"
)

// Finding is one line of doctor's report.
type Finding struct {
	Check  string `json:"check"`  // what was looked at
	Status string `json:"status"` // ok, fixed, suggestion (exit 0) or problem (exit 3)
	Detail string `json:"detail"`
}

// Doctor checks an opened repository.
type Doctor struct {
	r    *repo.Repo
	pool *pool.Pool
}

// New is the doctor of an opened repository.
func New(r *repo.Repo) *Doctor {
	return &Doctor{r: r, pool: pool.New(r)}
}

// Run compares the state, git and the file system and reports where
// they drift apart. With fix it repairs what is safe: envs whose
// worktree was deleted, moved or switched by hand, and git's
// registrations of deleted worktrees, and removes, following no link, the
// nested repositories and git directories a container planted in a full
// env's worktree and the special files where git opens its own in any
// env's. Unknown worktrees, directories that are no longer worktrees and
// git's lock files are only reported. The hooks' findings come last.
func (d *Doctor) Run(ctx context.Context, fix bool) ([]Finding, error) {
	var out []Finding
	add := func(check, status, format string, args ...any) {
		out = append(out, Finding{Check: check, Status: status, Detail: fmt.Sprintf(format, args...)})
	}
	if err := d.r.Store.Check(ctx); err != nil {
		return nil, err // damage, which the caller reports (or moves aside)
	}
	version, err := d.r.Store.Version(ctx)
	if err != nil {
		return nil, err
	}
	if version > state.SchemaVersion {
		add("state", "problem", "schema version %d is newer than this git-apex writes (%d): upgrade git-apex", version, state.SchemaVersion)
	} else {
		add("state", "ok", "schema version %d at %s", version, repo.StatePath(d.r.Git))
	}
	pol, err := d.r.Policy()
	if err != nil {
		add("policy", "problem", "%v", err)
		pol = policy.Default()
	} else {
		add("policy", "ok", "%s", pick(pol.File == "", "(built-in defaults)", pol.File))
	}
	switch version, err := d.r.RuntimeVersion(ctx); {
	case err == nil:
		add("container runtime", "ok", "%s", version)
	case asksFull(pol):
		add("container runtime", "problem", "the policy asks for full isolation, but %v: those environments fall back to worktrees", err)
	default:
		add("container runtime", "ok", "none answers, and the policy asks for no full isolation (%v)", err)
	}

	lk, err := d.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	recovered, err := d.recoverCrashes(ctx, lk, fix)
	out = append(out, recovered...)
	if errors.Is(err, errWorktreesUnreadable) {
		add("worktrees", "problem", "%v", err)
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	worktrees, envs, err := d.r.Snapshot(ctx, lk)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, e := range envs {
		drift := heal.Diagnose(d.r, e, worktrees)
		known[hostpath.RealPath(e.Path)] = true
		switch {
		case drift.Kind == heal.None:
		case drift.Kind == heal.Gitfile && fix:
			if err := heal.RestoreGitfile(lk, drift.Worktree.Path); err != nil {
				add(e.Identity, "problem", "%s; cannot restore it: %v", drift.Describe(e), err)
			} else {
				add(e.Identity, "fixed", "%s; restored it", drift.Describe(e))
			}
		case drift.Kind == heal.Gitfile:
			add(e.Identity, "problem", "%s; git-apex runs no git there until `git apex doctor --fix` restores it", drift.Describe(e))
		case drift.Kind == heal.Trapped: // checkTraps reports them, every one
		case drift.Kind == heal.Gone && drift.Found:
			// Perhaps moved with plain mv: git's registration holds its
			// index, so --fix follows it when it finds where it went, and
			// else leaves both the record and the registration.
			if moved, ok := heal.FindMoved(d.r.Git, e.Path); ok && fix {
				if _, err := heal.Follow(ctx, d.r, lk, e, moved); err != nil {
					add(e.Identity, "problem", "%s; found it at %s, but cannot repair git's registration: %v", drift.Describe(e), moved, err)
				} else {
					add(e.Identity, "fixed", "its worktree was moved by hand to %s: found it, repaired git's registration (`git worktree repair`) and followed it", moved)
				}
				continue
			} else if ok {
				add(e.Identity, "problem", "%s: it is at %s; `git apex doctor --fix` repairs git's registration and follows it", drift.Describe(e), moved)
				continue
			}
			add(e.Identity, "problem", "%s; %s", drift.Describe(e), heal.MissingHint(e))
		case fix && drift.Kind != heal.Stranger:
			detail := drift.Describe(e)
			if err := heal.Repair(ctx, d.r, lk, e, drift); err != nil {
				return nil, err
			}
			add(e.Identity, "fixed", "%s", detail)
		case drift.Kind == heal.Stranger:
			add(e.Identity, "problem", "%s; look inside it, move it away, then run `git apex doctor --fix`", drift.Describe(e))
		default:
			add(e.Identity, "problem", "%s; `git apex doctor --fix` repairs the record", drift.Describe(e))
		}
	}
	out = append(out, d.checkContainers(ctx, envs, fix)...)
	out = append(out, d.checkTraps(envs, fix)...)
	out = append(out, d.checkPlanted(ctx, envs, fix)...)
	out = append(out, d.checkPrivate(envs, fix)...)
	root := pol.EnvRoot(d.r.Git.MainRoot(), d.r.Git.Name)
	for _, wt := range worktrees[1:] {
		switch {
		case wt.Prunable && !wt.Locked && !known[hostpath.RealPath(wt.Path)] && !sweep.ApexMade(d.r, envs, wt.Path):
			add("worktree "+wt.Path, "suggestion", "%s", sweep.ForeignGoneHint)
		case wt.Prunable && !wt.Locked && !known[hostpath.RealPath(wt.Path)]: // an env's own is repaired with it
			add("worktree "+wt.Path, pick(fix, "fixed", "problem"), "git still registers this deleted worktree; %s",
				pick(fix, "pruned", "`git apex doctor --fix` prunes it"))
		case !known[hostpath.RealPath(wt.Path)] && hostpath.Within(wt.Path, root) && !wt.Prunable && wt.LockReason != "initializing": // half made: recoverCrashes
			add("worktree "+wt.Path, "problem", "a worktree under the environment root that git-apex does not know; `git apex gc --orphans --force` adopts it")
		}
	}
	if fix {
		// Registrations of deleted worktrees git-apex made and no live env
		// owns, locked ones excepted: an env's missing one waits for its
		// repair, and the user's own may have been moved (sweep.ApexMade).
		for _, wt := range worktrees[1:] {
			if wt.Prunable && !wt.Locked && !known[hostpath.RealPath(wt.Path)] && sweep.ApexMade(d.r, envs, wt.Path) {
				if err := lk.RemoveWorktree(ctx, wt.Path); err != nil {
					return nil, err
				}
			}
		}
	}
	return append(out, d.hooks(ctx)...), nil
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

// checkPlanted reports, in each live full env's worktree, the nested
// repositories, .git entries and git directories its container planted
// anywhere, in tracked, ignored and untracked directories
// (planted.Anywhere), but the git directories the repository
// commits as they are in the env's start commit: a problem, which fix removes (planted.Remove: a git
// directory's own entries, following no link). Which are committed comes
// from one git ls-files, where git may run (else every git directory
// counts).
func (d *Doctor) checkPlanted(ctx context.Context, envs []*state.Env, fix bool) []Finding {
	var out []Finding
	for _, e := range envs {
		if !e.Contained() || !e.Live() {
			continue
		}
		found := planted.Anywhere(e.Path)
		if len(found) > 0 && heal.CheckGitfile(d.r, e) == nil {
			found = planted.NotCommitted(ctx, d.r.Git, e.Path, e.StartCommit, found)
		}
		switch {
		case len(found) == 0:
		case !fix:
			out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: planted.Describe(found)})
		default:
			out = append(out, removed(e.Identity, "what its container planted that git would obey", quoted(found), planted.Remove(e.Path, found)))
		}
	}
	return out
}

// checkTraps reports, in each live env's worktree, what would hold git
// where it opens files of its own (trap.Find: git-apex runs no git there
// while one is at the top, and stops git that meets one deeper): a
// problem, which fix removes, or opens when it is a closed directory
// (trap.Remove, following no link).
func (d *Doctor) checkTraps(envs []*state.Env, fix bool) []Finding {
	var out []Finding
	for _, e := range envs {
		if !e.Live() || e.Mode == string(policy.Shared) || !hostpath.Exists(e.Path) {
			continue
		}
		if !fix {
			if err := trap.In(e.Path); len(err.Traps) > 0 {
				out = append(out, Finding{Check: e.Identity, Status: "problem", Detail: err.Error()})
			}
			continue
		}
		done, err := trap.Remove(e.Path)
		var gone, opened []string
		for _, t := range done {
			rel, _ := filepath.Rel(e.Path, t.Path)
			if t.Why == trap.Closed {
				opened = append(opened, rel)
			} else {
				gone = append(gone, rel)
			}
		}
		if len(opened) > 0 {
			out = append(out, Finding{Check: e.Identity, Status: "fixed", Detail: "opened the directories git could enter but not list: " + quoted(opened)})
		}
		if len(gone) > 0 || err != nil {
			out = append(out, removed(e.Identity, "the traps where git opens files of its own", quoted(gone), err))
		}
	}
	return out
}

// removed is the finding of a removal by fix of what in an env's
// worktree, named by names.
func removed(identity, what, names string, err error) Finding {
	if err != nil {
		return Finding{Check: identity, Status: "problem", Detail: fmt.Sprintf("cannot remove %s (%s): %v", what, names, err)}
	}
	return Finding{Check: identity, Status: "fixed", Detail: fmt.Sprintf("removed %s: %s", what, names)}
}

// quoted is rels quoted, comma-separated.
func quoted(rels []string) string {
	q := make([]string, len(rels))
	for i, rel := range rels {
		q[i] = strconv.Quote(rel)
	}
	return strings.Join(q, ", ")
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

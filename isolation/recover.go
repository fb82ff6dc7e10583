package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/state"
)

// What a killed git-apex can leave, and how doctor finds it:
//
//   - a start or removal cut short: its intent (intent.go), which names
//     the path, the branch and whether the start made it;
//   - a pool slot made or moved without its row, or a row whose worktree
//     went: everything under apex/pool that no slot row names;
//   - git's own "initializing" lock on a worktree whose `git worktree add`
//     was killed;
//   - a sandbox (apex/sandbox) or a labelled container that no env owns;
//   - git lock files (index.lock, refs/heads/x.lock, ...) that no process
//     has open.
//
// recoverCrashes reports each; with fix it clears it. None of it can hold
// anyone's work: a start's worktree holds only what git checked out until
// the start is recorded (copying and setup come after), a removal's
// intent is written once its checks passed, and pool slots, sandboxes of
// no env and lock files are git-apex's and git's own.

// recoverCrashes finds and, with fix, clears what killed processes left.
// The caller holds the repository lock.
func (m *Manager) recoverCrashes(ctx context.Context, lk *gitx.Locked, fix bool) ([]Finding, error) {
	var out []Finding
	report := func(check, detail string, fixed bool, err error) {
		switch {
		case err != nil:
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; cannot clear it: " + err.Error()})
		case fixed:
			out = append(out, Finding{Check: check, Status: "fixed", Detail: detail + "; cleared"})
		default:
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; `git apex doctor --fix` clears it"})
		}
	}
	// git's lock files first: the repairs below run git.
	for _, lock := range staleGitLocks(m.Git.CommonDir) {
		report("git lock", lock+" is held by no process: a killed git left it", fix, ifFix(fix, func() error { return os.Remove(lock) }))
	}
	// An intent half written: its process was killed before it changed
	// anything (intents are written under the lock this holds).
	halfWritten, _ := filepath.Glob(filepath.Join(m.intentDir(), "*.tmp"))
	for _, tmp := range halfWritten {
		report("intent "+filepath.Base(tmp), "an intent whose writing was cut short, before anything was done", fix,
			ifFix(fix, func() error { return os.Remove(tmp) }))
	}
	intents, err := m.orphanIntents()
	if err != nil {
		return nil, err
	}
	for _, in := range intents {
		what := fmt.Sprintf("a %s of %s was cut short (process %d is gone)", in.Op, in.Identity, in.PID)
		if !fix {
			report(in.Identity, what, false, nil)
			continue
		}
		err := m.recoverIntent(ctx, lk, in)
		if err == nil {
			in.done()
		}
		report(in.Identity, what, true, err)
	}
	if _, err := m.reclaim(ctx, lk); err != nil {
		return nil, err
	}
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	slots, err := m.Store.Slots(ctx)
	if err != nil {
		return nil, err
	}
	isSlot := map[string]bool{}
	for _, s := range slots {
		isSlot[realPath(s.Path)] = true
	}
	registered := map[string]bool{}
	for _, wt := range worktrees[1:] {
		registered[realPath(wt.Path)] = true
		switch {
		case within(wt.Path, m.poolDir()) && !isSlot[realPath(wt.Path)]:
			detail := "a pool worktree that no slot records (a killed `pool warm` or pooled start)"
			report("worktree "+wt.Path, detail, fix, ifFix(fix, func() error { return lk.DropWorktree(ctx, wt.Path) }))
		case wt.Locked && wt.LockReason == "initializing" && wt.Prunable:
			detail := "git's registration of a worktree whose `git worktree add` was killed"
			report("worktree "+wt.Path, detail, fix, ifFix(fix, func() error { return lk.DropWorktree(ctx, wt.Path) }))
		}
	}
	// Directories in the pool that are no worktree: a killed add's.
	if entries, err := os.ReadDir(m.poolDir()); err == nil {
		for _, e := range entries {
			path := filepath.Join(m.poolDir(), e.Name())
			if !registered[realPath(path)] && !isSlot[realPath(path)] {
				report("pool "+path, "a pool directory that is no worktree", fix, ifFix(fix, func() error { return os.RemoveAll(path) }))
			}
		}
	}
	sandboxes, err := m.orphanSandboxes(ctx)
	if err != nil {
		return nil, err
	}
	for _, dir := range sandboxes {
		report("sandbox "+filepath.Base(dir), "a container's private git directory that no environment owns", fix,
			ifFix(fix, func() error { return os.RemoveAll(dir) }))
	}
	return out, nil
}

// ifFix runs fn when fix is set.
func ifFix(fix bool, fn func() error) error {
	if !fix {
		return nil
	}
	return fn()
}

// recoverIntent undoes a start or finishes a removal that a killed
// process left half done.
func (m *Manager) recoverIntent(ctx context.Context, lk *gitx.Locked, in *intent) error {
	env, err := m.Store.Live(ctx, in.Identity)
	if err != nil {
		return err
	}
	recorded := env != nil && realPath(env.Path) == realPath(in.Path)
	switch {
	case in.Op == "start" && recorded:
		return nil // the env was made and recorded: nothing to undo
	case in.Op == "remove" && !recorded:
		return nil // the removal was recorded
	case in.Op == "remove":
		return m.finishRemoval(ctx, lk, env, in)
	}
	// A start that was not recorded: its path did not exist before it
	// (start refuses a path that does), and holds only what git checked
	// out.
	if err := lk.DropWorktree(ctx, in.Path); err != nil {
		return err
	}
	if in.NewBranch {
		if refs, err := lk.Refs(ctx, "refs/heads/"+in.Branch); err == nil && refs["refs/heads/"+in.Branch].Hash == in.Start {
			if err := lk.DeleteBranchAt(ctx, in.Branch, in.Start); err != nil {
				return err
			}
		}
	}
	return m.dropContainerOf(ctx, in.Identity)
}

// finishRemoval completes a removal whose checks had passed when its
// process was killed: what is left of the worktree goes, then the branch
// when it was to be deleted, then the record.
func (m *Manager) finishRemoval(ctx context.Context, lk *gitx.Locked, env *state.Env, in *intent) error {
	if contained(env) {
		if err := m.dropContainerOf(ctx, env.Identity); err != nil {
			return err
		}
	}
	if env.Mode != "shared" {
		if err := lk.DropWorktree(ctx, env.Path); err != nil {
			return err
		}
	}
	if in.DeleteBranch && in.Branch != "" {
		if refs, err := lk.Refs(ctx, "refs/heads/"+in.Branch); err == nil && len(refs) > 0 {
			if err := lk.DeleteBranch(ctx, in.Branch); err != nil {
				return err
			}
		}
	}
	_, err := m.Store.Destroy(ctx, env, "removed", "finished by doctor after the removing process was killed")
	return err
}

// dropContainerOf removes identity's container and sandbox when no live
// env owns them.
func (m *Manager) dropContainerOf(ctx context.Context, identity string) error {
	if env, err := m.Store.Live(ctx, identity); err != nil || env != nil && contained(env) {
		return err
	}
	s := m.sandboxFor(identity, "", "")
	if rt, err := m.runtime(ctx); err == nil {
		if err := rt.Remove(ctx, s.name); err != nil {
			return err
		}
	}
	return os.RemoveAll(s.dir)
}

// orphanSandboxes are the sandboxes no live full env owns and no
// container uses.
func (m *Manager) orphanSandboxes(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(m.Git.ApexDir(), "sandbox"))
	if err != nil {
		return nil, nil
	}
	envs, err := m.Store.Envs(ctx, false)
	if err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, e := range envs {
		if contained(e) {
			owned[m.containerName(e.Identity)] = true
		}
	}
	rt, rtErr := m.runtime(ctx)
	var out []string
	for _, e := range entries {
		if owned[e.Name()] {
			continue
		}
		if rtErr == nil {
			if info, err := rt.Inspect(ctx, e.Name()); err != nil || info.State != "missing" {
				continue // a batch task's, or a container gc --orphans reports
			}
		}
		out = append(out, filepath.Join(m.Git.ApexDir(), "sandbox", e.Name()))
	}
	return out, nil
}

// staleGitLocks lists git's lock files in the common dir (its own, and
// under refs/ and worktrees/) that no process has open: git keeps a lock
// file open while it holds it, so one nobody has open was left by a git
// that was killed.
func staleGitLocks(commonDir string) []string {
	var locks []string
	filepath.WalkDir(commonDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(commonDir, path)
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		if d.IsDir() && rel != "." && top != "refs" && top != "worktrees" && top != "logs" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".lock") && top != "apex" {
			locks = append(locks, path)
		}
		return nil
	})
	if len(locks) == 0 {
		return nil
	}
	open := openFiles()
	var stale []string
	for _, l := range locks {
		if !open[l] {
			stale = append(stale, l)
		}
	}
	return stale
}

// openFiles are the files some process has open, as /proc shows them.
func openFiles() map[string]bool {
	open := map[string]bool{}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil {
				open[target] = true
			}
		}
	}
	return open
}

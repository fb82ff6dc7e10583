package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/intent"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// What a killed git-apex can leave, and how doctor finds it:
//
//   - a start, removal or restore cut short: its intent (the intent package),
//     which names the path, the branch and whether the start or restore made it
//     (a restore's, the trash entry it puts back);
//   - a pool slot made or moved without its row, or a row whose worktree
//     went: everything under apex/pool that no slot row names;
//   - git's own "initializing" lock on a worktree whose `git worktree add`
//     was killed;
//   - a sandbox (apex/sandbox) or a labelled container that no env owns;
//   - git lock files (index.lock, refs/heads/x.lock, ...) that no process
//     has open;
//   - the temporary index the trash keeps work through
//     (apex-trash-index-<digits>, in the common dir or a worktree's admin
//     dir), left by a removal, drain or doctor killed while keeping work;
//   - processes of a batch task still running in its pool slot after the
//     batch was killed (pool.Orphans; in its cached clones' pools too),
//     ended before the slot is reclaimed.
//
// recoverCrashes reports each; with fix it clears it. None of it can hold
// anyone's work: a start's worktree holds only what git checked out until
// the start is recorded (copying and setup come after), a removal's
// intent is written once its checks passed, and pool slots, sandboxes of
// no env and lock files are git-apex's and git's own.

// recoverCrashes finds and, with fix, clears what killed processes left.
// The caller holds the repository lock.
func (d *Doctor) recoverCrashes(ctx context.Context, lk *gitx.Locked, fix bool) ([]Finding, error) {
	var out []Finding
	// clear reports a leftover and, with fix, clears it with fn.
	clear := func(check, detail string, fn func() error) {
		switch {
		case !fix:
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; `git apex doctor --fix` clears it"})
		default:
			if err := fn(); err != nil {
				out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; cannot clear it: " + err.Error()})
			} else {
				out = append(out, Finding{Check: check, Status: "fixed", Detail: detail + "; cleared"})
			}
		}
	}
	// git's lock files first: the repairs below run git.
	for _, lock := range staleGitLocks(d.r.Git.CommonDir) {
		clear("git lock", lock+" is held by no process: a killed git left it", func() error { return os.Remove(lock) })
	}
	// The trash writes its temporary indexes under the repository lock,
	// which this holds: one there now was left by a killed process.
	for _, index := range staleTrashIndexes(d.r.Git.CommonDir) {
		clear("trash index", index+" is a temporary index of a git-apex killed while keeping work in the trash (the work is in the worktree still, or in the trash)",
			func() error { return os.Remove(index) })
	}
	// Then the registrations a killed `git worktree add` left half written,
	// on which every git worktree command fails.
	half := halfWrittenRegistrations(d.r.Git.CommonDir)
	for _, admin := range half {
		clear("worktree registration "+filepath.Base(admin), "git's registration of a worktree whose `git worktree add` was killed while writing it ("+admin+")",
			func() error { return os.RemoveAll(admin) })
	}
	if len(half) > 0 && !fix {
		return out, errWorktreesUnreadable
	}
	// An intent half written: its process was killed before it changed
	// anything (intents are written under the lock this holds).
	intents := intent.Dir(d.r.Git.ApexDir())
	halfWritten := intent.HalfWritten(intents)
	for _, tmp := range halfWritten {
		clear("intent "+filepath.Base(tmp), "an intent whose writing was cut short, before anything was done", func() error { return os.Remove(tmp) })
	}
	orphans, err := intent.Orphans(intents)
	if err != nil {
		return nil, err
	}
	// A restore runs a start: that start is undone first (recoverRestore).
	isRestore := func(in *intent.Intent) bool { return in.Op == "restore" }
	restores := slices.DeleteFunc(slices.Clone(orphans), func(in *intent.Intent) bool { return !isRestore(in) })
	orphans = append(slices.DeleteFunc(orphans, isRestore), restores...)
	for _, in := range orphans {
		what := fmt.Sprintf("a %s of %s was cut short (process %d is gone)", in.Op, in.Identity, in.PID)
		if !fix {
			out = append(out, Finding{Check: in.Identity, Status: "problem", Detail: what + "; `git apex doctor --fix` repairs it"})
			continue
		}
		done, ok, err := d.recoverIntent(ctx, lk, in)
		if err != nil {
			out = append(out, Finding{Check: in.Identity, Status: "problem", Detail: what + "; cannot repair it: " + err.Error()})
			continue
		}
		in.Done()
		out = append(out, Finding{Check: in.Identity, Status: pick(ok, "fixed", "problem"), Detail: what + "; " + done})
	}
	// A batch killed under its tasks: what they left running in their
	// slots is ended before the slots are reclaimed (and reset).
	left, closeClones, err := d.pool.Orphans(ctx)
	defer closeClones()
	if err != nil {
		return nil, err
	}
	for _, o := range left {
		what := fmt.Sprintf("%s of a task whose holder (process %d) is gone: still running in it", hostexec.Describe(o.Procs), o.Slot.HolderPID)
		clear("pool slot "+o.Slot.Path, what, o.End)
	}
	if fix || len(left) == 0 {
		if _, err := d.pool.Reclaim(ctx, lk); err != nil {
			return nil, err
		}
	}
	worktrees, envs, err := d.r.Snapshot(ctx, lk)
	if err != nil {
		return nil, err
	}
	slots, err := d.r.Store.Pool().All(ctx)
	if err != nil {
		return nil, err
	}
	// Pool worktrees are slots, or envs a batch kept where they were
	// (--keep-failed): those hold a failed task's output.
	owned := map[string]bool{}
	for _, s := range slots {
		owned[hostpath.RealPath(s.Path)] = true
	}
	for _, e := range envs {
		owned[hostpath.RealPath(e.Path)] = true
	}
	registered := map[string]bool{}
	for _, wt := range worktrees[1:] {
		registered[hostpath.RealPath(wt.Path)] = true
		switch {
		case hostpath.Within(wt.Path, d.pool.Dir()) && !owned[hostpath.RealPath(wt.Path)]:
			clear("worktree "+wt.Path, "a pool worktree that no slot records (a killed `pool warm` or pooled start)",
				func() error { return lk.DropWorktree(ctx, wt.Path) })
		case wt.Locked && wt.LockReason == "initializing" && wt.Prunable:
			clear("worktree "+wt.Path, "git's registration of a worktree whose `git worktree add` was killed",
				func() error { return lk.DropWorktree(ctx, wt.Path) })
		}
	}
	out = append(out, d.halfMade(ctx, lk, worktrees, owned, fix)...)
	// Directories in the pool that are no worktree: a killed add's.
	if entries, err := os.ReadDir(d.pool.Dir()); err == nil {
		for _, e := range entries {
			path := filepath.Join(d.pool.Dir(), e.Name())
			if !registered[hostpath.RealPath(path)] && !owned[hostpath.RealPath(path)] {
				clear("pool "+path, "a pool directory that is no worktree", func() error { return os.RemoveAll(path) })
			}
		}
	}
	for _, dir := range d.orphanSandboxes(ctx, envs) {
		clear("sandbox "+filepath.Base(dir), "a container's private git directory that no environment owns", func() error { return os.RemoveAll(dir) })
	}
	return out, nil
}

// recoverIntent undoes a start, finishes a removal, or finishes or
// undoes a restore (recoverRestore) that a killed process left half done, and says what it did; ok is false when what
// it left needs the user (a problem).
func (d *Doctor) recoverIntent(ctx context.Context, lk *gitx.Locked, in *intent.Intent) (done string, ok bool, err error) {
	if in.Op == "restore" {
		return d.recoverRestore(ctx, lk, in)
	}
	env, err := d.r.Store.Live(ctx, in.Identity)
	if err != nil {
		return "", false, err
	}
	recorded := env != nil && hostpath.RealPath(env.Path) == hostpath.RealPath(in.Path)
	switch {
	case in.Op == "start" && recorded:
		return "it had recorded the env: nothing to undo", true, nil
	case in.Op == "remove" && !recorded:
		return "it had recorded the removal: nothing to finish", true, nil
	case in.Op == "remove":
		return d.finishRemoval(ctx, lk, env, in)
	case in.Shared:
		return d.undoSharedSwitch(ctx, lk, in)
	}
	// A start that was not recorded: its path did not exist before it
	// (start refuses a path that does), and holds what git checked out,
	// or part of it (copying and setup come after the record). Anything
	// else there goes to the trash before the worktree goes.
	kept, err := d.dropHalfMade(ctx, lk, trash.Entry{Identity: in.Identity, Branch: in.Branch, Base: in.Base, Path: in.Path, Head: in.Start})
	if err != nil {
		return "", false, err
	}
	dropped, err := dropNewBranch(ctx, lk, in)
	if err != nil {
		return "", false, err
	}
	return "undid it: removed its worktree" + kept + dropped, true, d.dropContainerOf(ctx, in.Identity, in.Engine)
}

// dropNewBranch deletes the branch a start cut short made, while it is
// still at the commit it was made at; dropped says so (" and its new
// branch x") when it did.
func dropNewBranch(ctx context.Context, lk *gitx.Locked, in *intent.Intent) (dropped string, err error) {
	if !in.NewBranch {
		return "", nil
	}
	if refs, err := lk.Refs(ctx, "refs/heads/"+in.Branch); err != nil || refs["refs/heads/"+in.Branch].Hash != in.Start {
		return "", nil
	}
	if err := lk.DeleteBranchAt(ctx, in.Branch, in.Start); err != nil {
		return "", err
	}
	return " and its new branch " + in.Branch, nil
}

// dropHalfMade removes the worktree at what.Path that a killed start or
// `git worktree add` left unfinished, after keeping in the trash what it
// holds beyond the checkout of what.Head (trash.RecordUnfinished), as the
// work of what.Identity; kept says so (", after keeping ...") when it
// did.
func (d *Doctor) dropHalfMade(ctx context.Context, lk *gitx.Locked, what trash.Entry) (kept string, err error) {
	if hostpath.Exists(what.Path) {
		what.Mode = string(policy.Worktree)
		e, err := trash.RecordUnfinished(ctx, lk, what, d.r.Store.Now())
		if err != nil {
			return "", fmt.Errorf("cannot keep what %s holds beyond its checkout in the trash, so nothing was removed: %w", what.Path, err)
		}
		if e != nil {
			kept = fmt.Sprintf(", after keeping the %s it held beyond its checkout in the trash (`git apex restore %s` brings them back)",
				words.Count(e.Files, "file"), what.Identity)
		}
	}
	return kept, lk.DropWorktree(ctx, what.Path)
}

// halfMade reports, and with fix removes (dropHalfMade), what killed
// `git worktree add`s left under the environment root that no env, slot
// or intent explains: worktrees git still marks "initializing", and
// directories whose .git file names a registration that is gone (doctor
// clears half-written ones). What they hold beyond the checkout of their
// HEAD (or of the main checkout's, where they have none) goes to the
// trash first.
func (d *Doctor) halfMade(ctx context.Context, lk *gitx.Locked, worktrees []gitx.Worktree, owned map[string]bool, fix bool) []Finding {
	pol, err := d.r.Policy()
	if err != nil {
		return nil // reported by Run
	}
	root := pol.EnvRoot(d.r.Git.MainRoot(), d.r.Git.Name)
	var found []trash.Entry
	registered := map[string]bool{}
	for _, wt := range worktrees[1:] {
		registered[hostpath.RealPath(wt.Path)] = true
		if wt.Locked && wt.LockReason == "initializing" && !wt.Prunable && !owned[hostpath.RealPath(wt.Path)] && hostpath.Within(wt.Path, root) {
			head := wt.Head
			if strings.Trim(head, "0") == "" { // git writes HEAD as zeros first
				head = worktrees[0].Head
			}
			found = append(found, trash.Entry{Identity: filepath.Base(wt.Path), Branch: wt.Branch, Base: worktrees[0].Branch, Path: wt.Path, Head: head})
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		path := filepath.Join(root, e.Name())
		if !registered[hostpath.RealPath(path)] && !owned[hostpath.RealPath(path)] && danglingGitfile(path, d.r.Git.CommonDir) {
			found = append(found, trash.Entry{Identity: e.Name(), Base: worktrees[0].Branch, Path: path, Head: worktrees[0].Head})
		}
	}
	var out []Finding
	for _, what := range found {
		check, detail := "worktree "+what.Path, "a worktree whose making was cut short, with no record and no intent"
		// What the trash cannot keep (a nested repository made there by
		// hand) is never deleted: the worktree stays, named.
		if unkept, err := unkeptIn(ctx, lk, what); err != nil || len(unkept) > 0 {
			why := "it holds what the trash cannot keep: " + quotedPaths(unkept)
			if err != nil {
				why = fmt.Sprintf("what it holds cannot be read: %v", err)
			}
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; " + why + ", so doctor leaves it: move out what you need, then delete it"})
			continue
		}
		if !fix {
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; `git apex doctor --fix` removes it, keeping in the trash what it holds beyond its checkout"})
			continue
		}
		if what.Head == "" {
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; the repository has no commit to compare it with: look inside it, then remove it"})
			continue
		}
		if kept, err := d.dropHalfMade(ctx, lk, what); err != nil {
			out = append(out, Finding{Check: check, Status: "problem", Detail: detail + "; cannot remove it: " + err.Error()})
		} else {
			out = append(out, Finding{Check: check, Status: "fixed", Detail: detail + "; removed it" + kept})
		}
	}
	return out
}

// unkeptIn is trash.UnkeptUnfinished of what; none when the repository
// has no commit to read what.Path against (doctor then removes nothing).
func unkeptIn(ctx context.Context, lk *gitx.Locked, what trash.Entry) ([]string, error) {
	if what.Head == "" {
		return nil, nil
	}
	return trash.UnkeptUnfinished(ctx, lk, what)
}

// quotedPaths joins paths, each quoted as Go quotes a string.
func quotedPaths(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = strconv.Quote(p)
	}
	return strings.Join(q, ", ")
}

// danglingGitfile reports whether dir's .git is a file naming a
// registration under commonDir's worktrees/ that does not exist.
func danglingGitfile(dir, commonDir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	return ok && hostpath.Within(target, filepath.Join(commonDir, "worktrees")) && !hostpath.Exists(target)
}

// finishRemoval completes a removal whose process was killed: what is
// left of the worktree goes, then the branch when it was to be deleted,
// then the record. Unless the removal was forced (its work then went to
// the trash before the intent was written), a worktree still whole is
// checked again here, as the removal checked it before its intent: one
// with work in it (anything but files that git had begun to delete)
// stays, and so does the env, as it was. A .git file that is gone or
// points away is put back first, so that the check reads the worktree's
// own index; only a worktree git no longer registers (git had deleted
// what it had checked) goes unchecked.
func (d *Doctor) finishRemoval(ctx context.Context, lk *gitx.Locked, env *state.Env, in *intent.Intent) (done string, ok bool, err error) {
	check := env.Mode != "shared" && !in.Force && hostpath.Exists(env.Path)
	if check && heal.GitfileProblem(d.r.Git, env.Path) != "" {
		worktrees, err := lk.Worktrees(ctx)
		if err != nil {
			return "", false, err
		}
		if _, check = gitx.FindWorktree(worktrees, env.Path); check {
			if err := heal.RestoreGitfile(lk, env.Path); err != nil {
				return fmt.Sprintf("kept %s, whose .git file cannot be put back (%v): the removal cannot be checked", env.Identity, err), false, nil
			}
		}
	}
	if check {
		bounded := ctx
		if env.Contained() {
			bounded = gitx.Bound(ctx, env.Path, env.Identity, gitx.ContainedLimit)
		}
		changes, err := lk.Status(bounded, env.Path, gitx.StatusOptions{Contained: env.Contained()})
		if err != nil {
			return "", false, err
		}
		if !changes.OnlyDeleted() {
			return fmt.Sprintf("kept %s as it was: it has %s, which doctor never discards", env.Identity, changes.Files()), true, nil
		}
	}
	if env.Contained() {
		if err := d.dropContainerOf(ctx, env.Identity, env.Engine); err != nil {
			return "", false, err
		}
	}
	if env.Mode != "shared" {
		if err := lk.DropWorktree(ctx, env.Path); err != nil {
			return "", false, err
		}
	}
	done = "finished it"
	if in.DeleteBranch && in.Branch != "" {
		if refs, err := lk.Refs(ctx, "refs/heads/"+in.Branch); err == nil && len(refs) > 0 {
			if err := lk.DeleteBranch(ctx, in.Branch); err != nil {
				return "", false, err
			}
		}
		done += ", branch " + in.Branch + " deleted"
	}
	if in.Kept {
		done += fmt.Sprintf("; its uncommitted work is in the trash: `git apex restore %s` brings it back", env.Identity)
	}
	_, err = d.r.Store.Destroy(ctx, env, "removed", "finished by doctor after the removing process was killed")
	return done, true, err
}

// dropContainerOf removes identity's container, on the engine recorded
// (a container.Endpoint.Record; "": the repository's own), and its
// sandbox when no live env owns them.
func (d *Doctor) dropContainerOf(ctx context.Context, identity, engine string) error {
	if env, err := d.r.Store.Live(ctx, identity); err != nil || env != nil && env.Contained() {
		return err
	}
	s := sandbox.For(d.r, identity, "", "")
	if rt, _, err := d.r.Engine(ctx, engine); err == nil {
		if err := rt.Remove(ctx, s.Name()); err != nil {
			return err
		}
	}
	return os.RemoveAll(s.Dir())
}

// orphanSandboxes are the sandboxes no live full env of envs owns, no
// warm container of the pool uses (on whichever engine), and no
// container on the repository's engine uses.
func (d *Doctor) orphanSandboxes(ctx context.Context, envs []*state.Env) []string {
	entries, err := os.ReadDir(sandbox.Root(d.r))
	if err != nil {
		return nil
	}
	owned := map[string]bool{}
	for _, e := range envs {
		if e.Contained() {
			owned[sandbox.ContainerName(d.r, e.Identity)] = true
		}
	}
	for _, box := range d.pool.WarmSandboxes(ctx) {
		owned[box] = true
	}
	rt, rtErr := d.r.Runtime(ctx)
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
		out = append(out, filepath.Join(sandbox.Root(d.r), e.Name()))
	}
	return out
}

// errWorktreesUnreadable stops doctor's checks at the registrations a
// killed `git worktree add` left half written: until they are cleared git
// lists no worktree, and every later check needs that list.
var errWorktreesUnreadable = errors.New("git cannot list the worktrees until doctor --fix clears the registrations above")

// halfWrittenRegistrations lists the directories under the common dir's
// worktrees/ that a `git worktree add` killed mid-way left: still locked
// as "initializing", with its commondir or gitdir file empty (git opens
// each with O_TRUNC, then writes it). git cannot read such a
// registration, so every `git worktree` command fails ("failed to read
// worktrees/<name>/commondir"), `prune` included; it holds nothing but
// what git was writing (HEAD and the index come after).
func halfWrittenRegistrations(commonDir string) []string {
	entries, err := os.ReadDir(filepath.Join(commonDir, "worktrees"))
	if err != nil {
		return nil
	}
	var half []string
	for _, e := range entries {
		admin := filepath.Join(commonDir, "worktrees", e.Name())
		if lock, err := os.ReadFile(filepath.Join(admin, "locked")); err != nil || strings.TrimSpace(string(lock)) != "initializing" {
			continue
		}
		for _, name := range []string{"commondir", "gitdir"} {
			if info, err := os.Lstat(filepath.Join(admin, name)); err == nil && info.Mode().IsRegular() && info.Size() == 0 {
				half = append(half, admin)
				break
			}
		}
	}
	return half
}

// trashIndexPrefix begins the name of the trash's temporary indexes
// (trash.Record, trash.RecordUnfinished): os.CreateTemp adds digits.
const trashIndexPrefix = "apex-trash-index-"

// staleTrashIndexes lists the trash's temporary indexes in the common dir
// and in its worktrees' admin dirs, by name: the prefix and digits only
// (their .lock files are git's, for staleGitLocks).
func staleTrashIndexes(commonDir string) []string {
	var found []string
	for _, dir := range append([]string{commonDir}, globDirs(filepath.Join(commonDir, "worktrees", "*"))...) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			digits, ok := strings.CutPrefix(e.Name(), trashIndexPrefix)
			if ok && digits != "" && strings.Trim(digits, "0123456789") == "" && e.Type().IsRegular() {
				found = append(found, filepath.Join(dir, e.Name()))
			}
		}
	}
	return found
}

// globDirs lists the directories that match pattern.
func globDirs(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	return slices.DeleteFunc(matches, func(m string) bool {
		info, err := os.Lstat(m)
		return err != nil || !info.IsDir()
	})
}

// staleGitLocks lists git's lock files in the common dir (its own, and
// under refs/ and worktrees/), and its packed-refs.new, that no process
// has open: git keeps them open while it holds them, so one nobody has
// open was left by a git that was killed.
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
		// packed-refs.new is the temporary file git writes packed refs to
		// while it holds packed-refs.lock.
		if !d.IsDir() && (strings.HasSuffix(path, ".lock") || rel == "packed-refs.new") && top != "apex" {
			locks = append(locks, path)
		}
		return nil
	})
	if len(locks) == 0 {
		return nil
	}
	open, known := openFiles()
	if !known {
		return nil // no /proc (macOS): any of them may be held
	}
	var stale []string
	for _, l := range locks {
		if !open[l] {
			stale = append(stale, l)
		}
	}
	return stale
}

// openFiles are the files some process has open, as /proc shows them;
// known is false where there is no /proc to tell.
func openFiles() (open map[string]bool, known bool) {
	open = map[string]bool{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
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
	return open, true
}

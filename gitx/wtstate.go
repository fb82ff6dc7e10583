package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A linked worktree's own git directory (<common dir>/worktrees/<name>)
// holds, beside its HEAD and index, whatever state git keeps per
// worktree: an operation in progress (rebase-merge/, rebase-apply/,
// BISECT_*, MERGE_*, CHERRY_PICK_HEAD, REVERT_HEAD, AUTO_MERGE,
// sequencer/), per-worktree refs (refs/worktree/*, refs/bisect/*) and
// reflogs, a sparse checkout (info/sparse-checkout, config.worktree);
// and the index carries flags (skip-worktree, assume-unchanged) that
// `git reset --hard` keeps and `git status` does not show. A pool slot
// hands none of it on: ResetClean clears it, and WorktreeState finds it.

// worktreeFiles are the entries a linked worktree's git directory keeps
// across ResetClean: what git needs to know the worktree (commondir,
// gitdir), its HEAD and index, and a reftable repository's ref store
// (git-apex's git writes files refs; a reftable's per-worktree refs are
// not looked into). A `locked` file is not kept: git's own
// "initializing" lock lasts only while `git worktree add` makes the
// slot, so one a slot has later is a task's `git worktree lock`, which
// would outlive the slot's reset and keep `pool drain` from removing
// git's registration of it.
var worktreeFiles = map[string]bool{"HEAD": true, "commondir": true, "gitdir": true, "index": true, "reftable": true}

// harmlessState are the entries ResetClean removes but WorktreeState
// does not count: what git itself writes as it makes or resets a
// worktree (HEAD's reflog, ORIG_HEAD) or fetches there.
var harmlessState = map[string]bool{"logs": true, "ORIG_HEAD": true, "FETCH_HEAD": true}

// worktreeGitDir is the git directory of the linked worktree at dir, as
// its .git file names it; it must lie in the repository's worktrees/, so
// that a .git file pointed elsewhere (by a container) is refused rather
// than cleared.
func (r *Repo) worktreeGitDir(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "", fmt.Errorf("%s is not a linked worktree: %w", dir, err)
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s/.git does not name a git directory", dir)
	}
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(dir, gitDir)
	}
	gitDir = filepath.Clean(gitDir)
	if !sameDir(filepath.Dir(gitDir), filepath.Join(r.CommonDir, "worktrees")) {
		return "", fmt.Errorf("%s/.git names %s, not a worktree of %s", dir, gitDir, r.CommonDir)
	}
	return gitDir, nil
}

// sameDir reports whether a and b name the same directory, through
// symbolic links too (a repository opened by a linked path).
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// extraState lists the entries of a linked worktree's git directory
// other than worktreeFiles (and harmlessState, unless all), sorted.
func extraState(gitDir string, all bool) ([]string, error) {
	entries, err := os.ReadDir(gitDir)
	if err != nil {
		return nil, err
	}
	var extra []string
	for _, e := range entries {
		if !worktreeFiles[e.Name()] && (all || !harmlessState[e.Name()]) {
			extra = append(extra, e.Name())
		}
	}
	sort.Strings(extra)
	return extra, nil
}

// flaggedEntries counts the index entries of the worktree at dir that
// carry skip-worktree or assume-unchanged (`git ls-files -v`: "S" or a
// lower-case tag).
func (r *Repo) flaggedEntries(ctx context.Context, dir string) (int, error) {
	out, err := r.readIn(ctx, dir, "ls-files", "-v", "-z")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range strings.Split(out, "\x00") {
		if f != "" && (f[0] == 'S' || (f[0] >= 'a' && f[0] <= 'z')) {
			n++
		}
	}
	return n, nil
}

// WorktreeState says what per-worktree git state the linked worktree at
// dir holds beyond its HEAD and index ("git state rebase-merge,
// refs"), and how many of its index entries carry skip-worktree or
// assume-unchanged; "" when none. It costs a directory read and one git
// command.
func (r *Repo) WorktreeState(ctx context.Context, dir string) (string, error) {
	gitDir, err := r.worktreeGitDir(dir)
	if err != nil {
		return "", err
	}
	extra, err := extraState(gitDir, false)
	if err != nil {
		return "", err
	}
	flagged, err := r.flaggedEntries(ctx, dir)
	if err != nil {
		return "", err
	}
	var found []string
	if len(extra) > 0 {
		found = append(found, "git state "+strings.Join(extra, ", "))
	}
	if flagged > 0 {
		found = append(found, fmt.Sprintf("%d index entries marked skip-worktree or assume-unchanged", flagged))
	}
	return strings.Join(found, "; "), nil
}

// clearWorktreeState removes, from the linked worktree git directory
// gitDir (of the worktree at dir), the git state WorktreeState finds,
// before a reset: all of gitDir but worktreeFiles, and the index itself
// when entries of it carry flags, so that the reset rebuilds it from
// the commit (and checks out the files a sparse checkout left out).
func (r *Repo) clearWorktreeState(ctx context.Context, dir, gitDir string) error {
	if err := removeExtraState(gitDir); err != nil {
		return err
	}
	flagged, err := r.flaggedEntries(ctx, dir)
	if err != nil || flagged == 0 {
		return err
	}
	return os.Remove(filepath.Join(gitDir, "index"))
}

// removeExtraState removes all of the linked worktree git directory
// gitDir but worktreeFiles.
func removeExtraState(gitDir string) error {
	extra, err := extraState(gitDir, true)
	if err != nil {
		return err
	}
	for _, name := range extra {
		if err := os.RemoveAll(filepath.Join(gitDir, name)); err != nil {
			return err
		}
	}
	return nil
}

package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Worktree is one entry of `git worktree list`.
type Worktree struct {
	Path       string
	Head       string // commit checked out; "" in a worktree with no commits
	Branch     string // short branch name; "" when detached
	Detached   bool
	Locked     bool
	LockReason string
	Prunable   bool // git's own verdict: its directory is gone
}

// Worktrees lists every worktree of the repository, the main checkout first.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.Read(ctx, r.CommonDir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return parseWorktrees(out), nil
}

// parseWorktrees reads `git worktree list --porcelain -z`: attributes end
// in NUL, an empty attribute ends a record.
func parseWorktrees(out string) []Worktree {
	var list []Worktree
	var cur *Worktree
	for _, field := range strings.Split(out, "\x00") {
		if field == "" {
			cur = nil
			continue
		}
		key, value, _ := strings.Cut(field, " ")
		if key == "worktree" {
			list = append(list, Worktree{Path: value})
			cur = &list[len(list)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = value
		case "branch":
			cur.Branch = strings.TrimPrefix(value, "refs/heads/")
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked, cur.LockReason = true, value
		case "prunable":
			cur.Prunable = true
		}
	}
	return list
}

// FindWorktree returns the worktree at path, comparing real paths.
func FindWorktree(list []Worktree, path string) (Worktree, bool) {
	want := realPath(path)
	for _, wt := range list {
		if wt.Path == path || realPath(wt.Path) == want {
			return wt, true
		}
	}
	return Worktree{}, false
}

// WorktreeOnBranch returns the worktree that has branch checked out.
func WorktreeOnBranch(list []Worktree, branch string) (Worktree, bool) {
	for _, wt := range list {
		if branch != "" && wt.Branch == branch {
			return wt, true
		}
	}
	return Worktree{}, false
}

// realPath resolves symlinks where it can, so /tmp and /private/tmp (or a
// symlinked home) compare equal.
func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return filepath.Clean(path)
}

// Locked is the repository-wide lock that serializes git's worktree
// bookkeeping: parallel `git worktree add` races on the repository's
// config and admin files. Every operation that adds, removes or prunes a
// worktree, or creates or deletes a branch, is a method of Locked, so it
// cannot run without the lock.
type Locked struct {
	*Repo
	file *os.File
}

// Lock takes the repository lock, waiting for other git-apex processes
// (and other goroutines) until ctx ends. It is an advisory flock on
// <common dir>/apex/repo.lock, released by Unlock or when the process
// exits. It is not reentrant: code that holds it passes the *Locked on,
// and never calls Lock again until it has unlocked.
func (r *Repo) Lock(ctx context.Context) (*Locked, error) {
	if err := os.MkdirAll(r.ApexDir(), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", r.ApexDir(), err)
	}
	name := filepath.Join(r.ApexDir(), "repo.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open lock file: %w", err)
	}
	wait := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &Locked{Repo: r, file: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", name, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// Unlock releases the lock.
func (l *Locked) Unlock() {
	l.file.Close()
}

// AddWorktree runs `git worktree add` at path. It checks out branch,
// creating it at start when newBranch is set (never tracking an upstream:
// that would write the repository's config), or, when branch is "", the
// commit start detached.
func (l *Locked) AddWorktree(ctx context.Context, path, branch string, newBranch bool, start string) error {
	args := []string{"worktree", "add", "--quiet"}
	switch {
	case branch == "":
		args = append(args, "--detach", path, start)
	case newBranch:
		args = append(args, "--no-track", "-b", branch, path, start)
	default:
		args = append(args, path, branch)
	}
	_, err := l.Run(ctx, l.CommonDir, args...)
	return err
}

// RemoveWorktree runs `git worktree remove`; force discards changes.
// A path whose directory is already gone only loses its registration.
func (l *Locked) RemoveWorktree(ctx context.Context, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := l.Run(ctx, l.CommonDir, append(args, path)...)
	return err
}

// DeleteBranch deletes a local branch, whatever it holds: callers decide
// first that nothing would be lost.
func (l *Locked) DeleteBranch(ctx context.Context, branch string) error {
	_, err := l.Run(ctx, l.CommonDir, "branch", "-D", branch)
	return err
}

// Switch checks out branch in the working tree at dir, creating it at
// start when newBranch is set (without tracking); with branch "" it
// checks out the commit start detached.
func (l *Locked) Switch(ctx context.Context, dir, branch string, newBranch bool, start string) error {
	args := []string{"switch", "--quiet", "--no-guess", branch}
	switch {
	case branch == "":
		args = []string{"switch", "--quiet", "--detach", start}
	case newBranch:
		args = []string{"switch", "--quiet", "--no-track", "-c", branch, start}
	}
	_, err := l.Run(ctx, dir, args...)
	return err
}

// DeleteBranchAt deletes branch only if it still points at commit: the
// undo of a branch this process created there, which never loses work
// (commit is held elsewhere) even if someone else made the branch.
func (l *Locked) DeleteBranchAt(ctx context.Context, branch, commit string) error {
	_, err := l.Run(ctx, l.CommonDir, "update-ref", "-d", "refs/heads/"+branch, commit)
	return err
}

// Prune removes git's registrations of worktrees whose directory is gone
// (locked ones excepted, as git does).
func (l *Locked) Prune(ctx context.Context) error {
	_, err := l.Run(ctx, l.CommonDir, "worktree", "prune")
	return err
}

package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/git-apex/git-apex/flock"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/nofollow"
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
	// Bare marks a bare repository's own entry, always the first: it has
	// no checkout; Branch and Head are the branch its HEAD names (the one
	// its worktrees start from, checked out nowhere) and that branch's tip.
	Bare bool
}

// Worktrees lists every worktree of the repository, the main checkout first.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.readIn(ctx, r.CommonDir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	list := parseWorktrees(out)
	if len(list) > 0 && list[0].Bare { // the branch HEAD names, once it has a commit
		out, err := r.readIn(ctx, r.CommonDir, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD")
		head, name, _ := strings.Cut(strings.TrimSpace(out), "\n")
		if branch, ok := strings.CutPrefix(name, "refs/heads/"); err == nil && ok {
			list[0].Head, list[0].Branch = head, branch
		}
	}
	return list, nil
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
		case "bare":
			cur.Bare = true
		}
	}
	return list
}

// FindWorktree returns the worktree at path, comparing real paths.
func FindWorktree(list []Worktree, path string) (Worktree, bool) {
	want := hostpath.RealPath(path)
	for _, wt := range list {
		if wt.Path == path || hostpath.RealPath(wt.Path) == want {
			return wt, true
		}
	}
	return Worktree{}, false
}

// WorktreeOnBranch returns the worktree that has branch checked out (a
// bare repository's HEAD branch is checked out nowhere).
func WorktreeOnBranch(list []Worktree, branch string) (Worktree, bool) {
	for _, wt := range list {
		if branch != "" && wt.Branch == branch && !wt.Bare {
			return wt, true
		}
	}
	return Worktree{}, false
}

// Locked is the repository-wide lock that serializes git's worktree
// bookkeeping: parallel `git worktree add` races on the repository's
// config and admin files. Every operation that adds, moves, removes or
// prunes a worktree, or writes a ref other than one worktree's own HEAD
// (a branch, a kept ref, a fetch), is a method of Locked, so it cannot run
// without the lock. What writes only one working tree's own HEAD, index
// and files (a leased pool slot's checkout and reset, a shared batch
// restoring the main checkout) runs on Repo: the lease, or the batch's
// ownership of the checkout, makes that tree the caller's alone.
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
	f, err := flock.Take(ctx, filepath.Join(r.ApexDir(), "repo.lock"))
	if err != nil {
		return nil, err
	}
	return &Locked{Repo: r, file: f}, nil
}

// Unlock releases the lock.
func (l *Locked) Unlock() {
	l.file.Close()
}

// AddWorktree runs `git worktree add` at path. It checks out branch,
// creating it at start when newBranch is set (never tracking an upstream:
// that would write the repository's config), or, when branch is "", the
// commit start detached.
//
// On a terminal, git's own output and checkout progress show there, as
// `git worktree add` shows them: a start that takes over a second says
// how far it is.
func (l *Locked) AddWorktree(ctx context.Context, path, branch string, newBranch bool, start string) error {
	terminal := term.IsTerminal(int(os.Stderr.Fd()))
	args := []string{"worktree", "add"}
	if !terminal {
		args = append(args, "--quiet")
	}
	switch {
	case branch == "":
		args = append(args, "--detach", path, start)
	case newBranch:
		args = append(args, "--no-track", "-b", branch, path, start)
	default:
		args = append(args, path, branch)
	}
	c := l.command(l.CommonDir, args, false)
	c.terminal = terminal
	_, err := run(ctx, c)
	return err
}

// RemoveWorktree runs `git worktree remove --force`: whatever the
// worktree holds goes (callers check first that nothing would be lost:
// git's own check is a git status no trap.Watch could stop). A path
// whose directory is already gone only loses its registration. What git
// cannot delete by the paths it uses (one 4,096 characters or more from
// /, which a container makes in an instant) is deleted here through
// directory handles (nofollow.RemoveAll); git then drops the
// registration, if its failed attempt left it.
func (l *Locked) RemoveWorktree(ctx context.Context, path string) error {
	_, err := l.runIn(ctx, l.CommonDir, "worktree", "remove", "--force", path)
	if err == nil || ctx.Err() != nil || !hostpath.Exists(path) {
		return err
	}
	if rerr := nofollow.RemoveAll(filepath.Dir(path), filepath.Base(path)); rerr != nil {
		return fmt.Errorf("%w; then %w", err, rerr)
	}
	list, lerr := l.Worktrees(ctx)
	if _, registered := FindWorktree(list, path); lerr == nil && !registered {
		return nil
	}
	_, err = l.runIn(ctx, l.CommonDir, "worktree", "remove", "--force", path)
	return err
}

// DeleteBranch deletes a local branch, whatever it holds: callers decide
// first that nothing would be lost.
func (l *Locked) DeleteBranch(ctx context.Context, branch string) error {
	_, err := l.runIn(ctx, l.CommonDir, "branch", "-D", branch)
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
	_, err := l.runIn(ctx, dir, args...)
	return err
}

// DeleteBranchAt deletes branch only if it still points at commit: the
// undo of a branch this process created there, which never loses work
// (commit is held elsewhere) even if someone else made the branch.
func (l *Locked) DeleteBranchAt(ctx context.Context, branch, commit string) error {
	_, err := l.runIn(ctx, l.CommonDir, "update-ref", "-d", "refs/heads/"+branch, commit)
	return err
}

// SetRef points ref at commit if it still points at old ("" when it must
// not exist yet), as seen from the working tree at dir (HEAD there is
// that worktree's own); it never follows a symbolic ref.
func (l *Locked) SetRef(ctx context.Context, dir, ref, commit, old string) error {
	_, err := l.runIn(ctx, dir, "update-ref", "--no-deref", "-m", "git-apex", ref, commit, old)
	return err
}

// Run runs git in dir (the working tree when dir is "") under the lock,
// with env added to its environment (a temporary GIT_INDEX_FILE, say),
// and returns stdout: the runner of a package that builds one concern of
// its own on git's plumbing (trash).
func (l *Locked) Run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	c := l.command(dir, args, false)
	c.env = append(gitEnv()[:len(gitEnv()):len(gitEnv())], env...)
	return run(ctx, c)
}

// DeleteRef deletes a ref that is not a branch git-apex manages (one of
// its own under refs/apex/).
func (l *Locked) DeleteRef(ctx context.Context, ref string) error {
	_, err := l.runIn(ctx, l.CommonDir, "update-ref", "-d", ref)
	return err
}

// RefsAt lists the refs under prefix (a folder such as refs/apex/kept/x)
// that point at commit, in one git call
// (under the lock: none is made or deleted meanwhile).
func (l *Locked) RefsAt(ctx context.Context, prefix, commit string) ([]string, error) {
	out, err := l.readIn(ctx, l.CommonDir, "for-each-ref", "--format=%(refname)", "--points-at="+commit, prefix)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// MoveIndex brings the index of the working tree at dir from commit from
// to commit to, as a fast-forward would, leaving the files alone (-i:
// another process wrote them, and plain -m refuses their stale entries).
// It fails, changing nothing, when an entry is neither from's nor to's.
func (l *Locked) MoveIndex(ctx context.Context, dir, from, to string) error {
	_, err := l.runIn(ctx, dir, "read-tree", "-m", "-i", from, to)
	return err
}

// DropWorktree removes whatever is at path and git's registration of it,
// whole or half made, locked as "initializing" by a killed `git worktree
// add` or not: only for what git-apex made and knows holds no work (a
// killed start's, a pool slot).
func (l *Locked) DropWorktree(ctx context.Context, path string) error {
	l.runIn(ctx, l.CommonDir, "worktree", "unlock", path)                       // may not be locked
	l.runIn(ctx, l.CommonDir, "worktree", "remove", "--force", "--force", path) // may be half made
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	// Its registration only: `git worktree prune` would also drop the
	// registration of a worktree the user moved by hand, and its index.
	list, err := l.Worktrees(ctx)
	if err != nil {
		return err
	}
	if _, registered := FindWorktree(list, path); !registered {
		return nil
	}
	_, err = l.runIn(ctx, l.CommonDir, "worktree", "remove", "--force", "--force", path)
	return err
}

// ForgetWorktree removes what is left at path of a worktree that git no
// longer takes for one, and that git refuses to remove: its .git file
// gone or pointing away (a `git worktree remove` cut short: git deletes
// the files first, the .git file among them). It runs no git (git there
// would obey whatever git directory it finds): the directory goes,
// following no link (nofollow.RemoveAll), then git's registration of it,
// the directory under the common dir's worktrees/ whose gitdir file
// names path/.git. Only that one: `git worktree prune` would forget too
// the user's worktrees whose directory is away for now (on a disk not
// mounted). Only for what git-apex made (a pool slot) and has kept what
// it held of the user's.
func (l *Locked) ForgetWorktree(path string) error {
	admin := filepath.Join(l.CommonDir, "worktrees")
	registration := ""
	entries, _ := os.ReadDir(admin) // none: no registration to forget
	dotgit := hostpath.RealPath(filepath.Join(path, ".git"))
	for _, e := range entries {
		back, err := os.ReadFile(filepath.Join(admin, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		named := strings.TrimSpace(string(back))
		if !filepath.IsAbs(named) { // worktree.useRelativePaths
			named = filepath.Join(admin, e.Name(), named)
		}
		if hostpath.RealPath(named) == dotgit {
			registration = e.Name()
			break
		}
	}
	if err := nofollow.RemoveAll(filepath.Dir(path), filepath.Base(path)); err != nil {
		return err
	}
	if registration == "" {
		return nil
	}
	return nofollow.RemoveAll(admin, registration)
}

package gitx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/git-apex/git-apex/hostpath"
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
	out, err := r.readIn(ctx, r.CommonDir, "worktree", "list", "--porcelain", "-z")
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
	want := hostpath.RealPath(path)
	for _, wt := range list {
		if wt.Path == path || hostpath.RealPath(wt.Path) == want {
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
	f, err := LockFile(ctx, filepath.Join(r.ApexDir(), "repo.lock"))
	if err != nil {
		return nil, err
	}
	return &Locked{Repo: r, file: f}, nil
}

// LockFile takes an advisory flock on the file name (made if missing),
// waiting for other processes until ctx ends; closing the file releases
// it, as does the process's exit.
func LockFile(ctx context.Context, name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot open lock file: %w", err)
	}
	wait := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
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
// whose directory is already gone only loses its registration.
func (l *Locked) RemoveWorktree(ctx context.Context, path string) error {
	_, err := l.runIn(ctx, l.CommonDir, "worktree", "remove", "--force", path)
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

// Prune removes git's registrations of worktrees whose directory is gone
// (locked ones excepted, as git does).
func (l *Locked) Prune(ctx context.Context) error {
	_, err := l.runIn(ctx, l.CommonDir, "worktree", "prune")
	return err
}

// FetchBundle brings ref from the bundle file into the repository as
// dst, once every object in it passed `git fsck`'s checks, warnings as
// errors (a .gitmodules naming a path out or a url that is an option, a
// .git in a tree, an overflowing date): git (2.39) fetches a bundle
// unchecked whatever transfer.fsckObjects says, so its pack is indexed
// first into a quarantine borrowing the repository's objects. No hooks,
// maintenance, submodule fetch or FETCH_HEAD.
func (l *Locked) FetchBundle(ctx context.Context, file, ref, dst string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	pack := bufio.NewReader(f)
	for line := ""; line != "\n" && err == nil; { // the header ends at an empty line (else index-pack fails)
		line, err = pack.ReadString('\n')
	}
	quarantine, err := os.MkdirTemp(filepath.Join(l.CommonDir, "objects"), "incoming-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(quarantine)
	env := append(gitEnv()[:len(gitEnv()):len(gitEnv())], "GIT_OBJECT_DIRECTORY="+quarantine, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(l.CommonDir, "objects"))
	if _, err := run(ctx, command{dir: l.CommonDir, args: []string{"index-pack", "--stdin", "--fix-thin", "--strict"}, env: env, stdin: pack}); err != nil {
		return fmt.Errorf("it holds objects that git's checks (those of git fsck) refuse: %w", err)
	}
	args := append(noHooks, "-c", "gc.auto=0", "-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags",
		"--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance", file, "+"+ref+":"+dst)
	_, err = l.runIn(ctx, l.CommonDir, args...)
	return err
}

// SetRef points ref at commit if it still points at old ("" when it must
// not exist yet), as seen from the working tree at dir (HEAD there is
// that worktree's own); it never follows a symbolic ref.
func (l *Locked) SetRef(ctx context.Context, dir, ref, commit, old string) error {
	_, err := l.runIn(ctx, dir, "update-ref", "--no-deref", "-m", "git-apex", ref, commit, old)
	return err
}

// DeleteRef deletes a ref that is not a branch git-apex manages (one of
// its own under refs/apex/).
func (l *Locked) DeleteRef(ctx context.Context, ref string) error {
	_, err := l.runIn(ctx, l.CommonDir, "update-ref", "-d", ref)
	return err
}

// MoveIndex brings the index of the working tree at dir from commit from
// to commit to, as a fast-forward would, leaving the files alone (-i:
// another process wrote them, and plain -m refuses their stale entries).
// It fails, changing nothing, when an entry is neither from's nor to's.
func (l *Locked) MoveIndex(ctx context.Context, dir, from, to string) error {
	_, err := l.runIn(ctx, dir, "read-tree", "-m", "-i", from, to)
	return err
}

// GitfileProblem checks the .git file of the linked worktree at path: it
// must be a regular file that names a git directory directly under the
// common dir's worktrees/, whose gitdir file names path/.git back. It
// returns what is wrong, or "". A .git file pointing elsewhere would make
// every git command there obey another git directory's config.
func (r *Repo) GitfileProblem(path string) string {
	dotgit := filepath.Join(path, ".git")
	info, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return "it has no .git file"
	case !info.Mode().IsRegular():
		return ".git is not a plain file"
	}
	target, err := readGitfile(dotgit)
	if err != nil {
		return err.Error()
	}
	if hostpath.RealPath(filepath.Dir(target)) != hostpath.RealPath(filepath.Join(r.CommonDir, "worktrees")) {
		return fmt.Sprintf("its .git file points to %s, not to a git directory of this repository's worktrees", target)
	}
	back, err := os.ReadFile(filepath.Join(target, "gitdir"))
	if err != nil || hostpath.RealPath(strings.TrimSpace(string(back))) != hostpath.RealPath(dotgit) {
		return fmt.Sprintf("its .git file points to %s, which belongs to another worktree", target)
	}
	return ""
}

// readGitfile reads the "gitdir: <path>" line of a .git file, resolving a
// relative path against the file's directory.
func readGitfile(name string) (string, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, _ := f.Read(buf)
	target, ok := strings.CutPrefix(strings.TrimSpace(string(buf[:n])), "gitdir: ")
	if !ok || target == "" || strings.ContainsAny(target, "\n\x00") {
		return "", errors.New("its .git file is not a gitdir line")
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	return filepath.Clean(target), nil
}

// RestoreGitfile rewrites the .git file of the linked worktree at path to
// name the git directory under worktrees/ that git registered for it.
func (l *Locked) RestoreGitfile(path string) error {
	dotgit := filepath.Join(path, ".git")
	if info, err := os.Lstat(dotgit); err == nil && info.IsDir() {
		return fmt.Errorf("%s is a directory; move it away by hand", dotgit)
	}
	admin := filepath.Join(l.CommonDir, "worktrees")
	entries, err := os.ReadDir(admin)
	if err != nil {
		return err
	}
	for _, e := range entries {
		back, err := os.ReadFile(filepath.Join(admin, e.Name(), "gitdir"))
		if err != nil || hostpath.RealPath(strings.TrimSpace(string(back))) != hostpath.RealPath(dotgit) {
			continue
		}
		// The directory may be a container's to write in: the new file is
		// made afresh (never through a link) and renamed over the old.
		tmp := dotgit + ".git-apex-tmp"
		os.Remove(tmp)
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString("gitdir: " + filepath.Join(admin, e.Name()) + "\n")
		if err := errors.Join(err, f.Close()); err != nil {
			os.Remove(tmp)
			return err
		}
		return os.Rename(tmp, dotgit)
	}
	return fmt.Errorf("git has no registration for %s", path)
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
	return l.Prune(ctx)
}

package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// AddDetached adds a worktree at path with commit checked out detached,
// running no hooks.
func (l *Locked) AddDetached(ctx context.Context, path, commit string) error {
	_, err := l.runIn(ctx, l.CommonDir, append(noHooks, "worktree", "add", "--quiet", "--detach", path, commit)...)
	return err
}

// MoveWorktree moves a worktree with `git worktree move`.
func (l *Locked) MoveWorktree(ctx context.Context, from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	_, err := l.runIn(ctx, l.CommonDir, "worktree", "move", from, to)
	return err
}

// CheckoutDetached checks out commit in the worktree at dir, detached and
// forced, running no hooks: it costs what differs, not the whole tree.
func (r *Repo) CheckoutDetached(ctx context.Context, dir, commit string) error {
	_, err := r.runIn(ctx, dir, append(noHooks, "checkout", "--quiet", "--force", "--detach", commit)...)
	return err
}

// SwitchNoHooks checks out branch in the worktree at dir, creating it at
// start when newBranch (without tracking; start "": at HEAD, with
// nothing checked out again), running no hooks. An existing branch is
// checked out whatever start says.
func (l *Locked) SwitchNoHooks(ctx context.Context, dir, branch string, newBranch bool, start string) error {
	args := append(noHooks, "switch", "--quiet", "--no-guess", branch)
	if newBranch {
		args = append(noHooks, "switch", "--quiet", "--no-track", "-c", branch)
		if start != "" {
			args = append(args, start)
		}
	}
	_, err := l.runIn(ctx, dir, args...)
	return err
}

// ErrSubmodules is ResetClean's answer for a contained working tree whose
// commit has submodules: git-apex does not enter them.
var ErrSubmodules = errors.New("the commit has submodules, which a container may have redirected")

// ResetClean throws away everything in the worktree at dir that commit
// does not hold: changes, untracked and ignored files, in submodules too;
// and leaves commit checked out, detached. It runs no hooks, and the same
// two commands as `git reset --hard && git clean -fdx` (reset to a commit
// on a detached HEAD moves HEAD there too), plus one for submodules when
// there are any. When contained (a container wrote there), nested
// repositories go too, and submodules are not entered: it returns
// ErrSubmodules when commit has any. dir must be a linked worktree: its
// own git state goes too (see WorktreeState): the operation in progress,
// its per-worktree refs and reflogs, its sparse checkout, and the
// skip-worktree and assume-unchanged flags of its index (which is then
// rebuilt from commit).
func (r *Repo) ResetClean(ctx context.Context, dir, commit string, contained bool) error {
	clean := "-fdxq"
	if contained {
		clean = "-ffdxq"
	}
	gitDir, err := r.worktreeGitDir(dir)
	if err != nil {
		return err
	}
	if !contained { // a container's .git files are not followed
		if err := r.unsetSubmodules(ctx, dir, gitDir); err != nil {
			return err
		}
	}
	if err := r.clearWorktreeState(ctx, dir, gitDir); err != nil {
		return err
	}
	for _, args := range [][]string{{"reset", "--quiet", "--hard", commit}, {"clean", clean}} {
		if _, err := r.runIn(ctx, dir, append(noHooks, args...)...); err != nil {
			return err
		}
	}
	if err := removeExtraState(gitDir); err != nil { // the reset's ORIG_HEAD and reflog
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitmodules")); err != nil {
		return nil
	}
	if contained {
		return ErrSubmodules
	}
	_, err = r.runIn(ctx, dir, append(noHooks, "submodule", "--quiet", "foreach", "--recursive", "git reset --quiet --hard && git clean -fdxq")...)
	return err
}

// unsetSubmodules empties the working tree of each submodule of the
// linked worktree at dir whose git directory lies in the worktree's own
// git directory gitDir (modules/, where `git submodule update --init`
// in a linked worktree puts it): clearWorktreeState removes modules/,
// which would leave the submodule's .git file naming nothing. The
// submodule is then as a fresh checkout leaves it: an empty directory,
// not set up. A submodule whose .git names anything else is left to the
// submodule step of ResetClean.
func (r *Repo) unsetSubmodules(ctx context.Context, dir, gitDir string) error {
	modules := filepath.Join(gitDir, "modules")
	if _, err := os.Stat(modules); err != nil {
		return nil
	}
	out, err := r.runIn(ctx, dir, "ls-files", "--stage", "-z")
	if err != nil {
		return err
	}
	for _, entry := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(entry, "\t")
		if !ok || !strings.HasPrefix(meta, "160000 ") {
			continue
		}
		sub := filepath.Join(dir, filepath.FromSlash(path))
		data, err := os.ReadFile(filepath.Join(sub, ".git"))
		if err != nil {
			continue // not set up, or a .git directory of its own
		}
		target, _ := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !filepath.IsAbs(target) {
			target = filepath.Join(sub, target)
		}
		if rel, err := filepath.Rel(modules, filepath.Clean(target)); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		if err := os.RemoveAll(sub); err != nil {
			return err
		}
		if err := os.Mkdir(sub, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// RestoreTracked puts the working tree at dir back to its HEAD: tracked
// files restored, untracked files removed, ignored files kept (the main
// checkout's .env and build caches are the user's).
func (r *Repo) RestoreTracked(ctx context.Context, dir string) error {
	for _, args := range [][]string{{"checkout", "--quiet", "--force", "HEAD", "--", "."}, {"clean", "-fdq"}} {
		if _, err := r.runIn(ctx, dir, append(noHooks, args...)...); err != nil {
			return err
		}
	}
	return nil
}

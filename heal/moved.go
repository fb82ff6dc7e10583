package heal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// FindMoved looks for where a worktree whose directory is gone, while
// git still registers it (a Gone drift, Found), was moved with plain mv:
// a directory whose .git file names that registration's git directory,
// among the entries of the directory it was in, of the one above, and of
// the one above the main checkout (where a user most likely moves it).
// It reads a few directories and small files, and runs no git.
func FindMoved(g *gitx.Repo, oldPath string) (string, bool) {
	admin, ok := registrationOf(g, oldPath)
	if !ok {
		return "", false
	}
	for _, parent := range []string{filepath.Dir(oldPath), filepath.Dir(filepath.Dir(oldPath)), filepath.Dir(g.MainRoot())} {
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range entries {
			candidate := filepath.Join(parent, e.Name())
			if !e.IsDir() || candidate == oldPath {
				continue
			}
			target, err := readGitfile(filepath.Join(candidate, ".git"))
			if err != nil {
				continue
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(candidate, target)
			}
			if hostpath.RealPath(target) == admin {
				return candidate, true
			}
		}
	}
	return "", false
}

// registrationOf is the git directory under the common dir's worktrees/
// whose gitdir file names path/.git.
func registrationOf(g *gitx.Repo, path string) (string, bool) {
	dirs, err := os.ReadDir(filepath.Join(g.CommonDir, "worktrees"))
	if err != nil {
		return "", false
	}
	want := filepath.Join(path, ".git")
	for _, d := range dirs {
		admin := filepath.Join(g.CommonDir, "worktrees", d.Name())
		back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
		if err == nil && strings.TrimSpace(string(back)) == want {
			return hostpath.RealPath(admin), true
		}
	}
	return "", false
}

// Follow repairs git's registration of env's worktree, moved by hand to
// moved (FindMoved), with `git worktree repair`, and records the move;
// it returns the worktree there.
func Follow(ctx context.Context, r *repo.Repo, lk *gitx.Locked, env *state.Env, moved string) (gitx.Worktree, error) {
	if _, err := lk.Run(ctx, r.Git.CommonDir, nil, "worktree", "repair", moved); err != nil {
		return gitx.Worktree{}, err
	}
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return gitx.Worktree{}, err
	}
	drift := Diagnose(r, env, worktrees)
	if drift.Kind != Moved {
		return gitx.Worktree{}, fmt.Errorf("git does not list it there after `git worktree repair` (%s)", drift.Describe(env))
	}
	return drift.Worktree, Repair(ctx, r, lk, env, drift)
}

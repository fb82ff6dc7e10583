package sandbox

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// A container can plant, in its worktree, what git on the host obeys as
// soon as anything runs git there (a shell prompt, an editor): a nested
// repository (`git init src`) whose config sets core.fsmonitor, a .git
// file naming a git directory it made, or such a git directory. git-apex
// never runs git inside them; list and doctor report them.

// Planted returns which of the untracked paths git status named in the
// worktree (slash-separated, "dir/" for a directory) is a directory that
// is a nested repository (holds a .git) or a git directory, as paths
// relative to the worktree. It looks at names only: nothing is opened.
func Planted(worktree string, untracked []string) []string {
	var found []string
	for _, d := range untracked {
		d, isDir := strings.CutSuffix(d, "/")
		if !isDir || d == "" || d == "." {
			continue
		}
		if p := plantedAt(worktree, d); p != "" {
			found = append(found, p)
		}
	}
	return found
}

// PlantedAnywhere walks the whole worktree (never following a link) for
// .git entries below its top (git tracks none) and git directories, at
// any depth; a git directory counts when untracked says its path (slash-
// separated, relative to the worktree) is not tracked: a repository may
// commit a bare one as a test fixture.
func PlantedAnywhere(worktree string, untracked func(rel string) bool) []string {
	var found []string
	filepath.WalkDir(worktree, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == worktree {
			return nil
		}
		rel, _ := filepath.Rel(worktree, p)
		rel = filepath.ToSlash(rel)
		switch {
		case e.Name() == ".git":
			if rel != ".git" {
				found = append(found, rel)
			}
			if e.IsDir() {
				return fs.SkipDir
			}
		case e.IsDir() && isGitDir(p) && untracked(rel):
			found = append(found, rel)
			return fs.SkipDir
		}
		return nil
	})
	return found
}

// plantedAt is d itself when it is a git directory, d/.git when it has
// one, else "".
func plantedAt(worktree, d string) string {
	dir := filepath.Join(worktree, filepath.FromSlash(d))
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return path.Join(d, ".git")
	}
	if isGitDir(dir) {
		return d
	}
	return ""
}

// isGitDir reports whether dir looks like a git directory to git: HEAD,
// objects/ and refs/ (what git's own discovery checks for).
func isGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// RemoveCommand is the shell command that deletes what Planted found at
// rel in worktree, its path quoted for the shell; "" when the name holds
// control characters, which a terminal could take for something else.
func RemoveCommand(worktree, rel string) string {
	p := filepath.Join(worktree, filepath.FromSlash(rel))
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return ""
		}
	}
	return "rm -rf " + hostpath.ShellQuote(p)
}

// WarnPlanted warns of what Planted finds in a full env's worktree; list
// calls it with the untracked paths its git status reported.
func WarnPlanted(r *repo.Repo, env *state.Env, untracked []string) {
	if found := Planted(env.Path, untracked); len(found) > 0 {
		r.Warnf("%s: %s", env.Identity, DescribePlanted(env.Path, found))
	}
}

// DescribePlanted says what Planted found in an env's worktree, with the
// commands that remove it.
func DescribePlanted(worktree string, found []string) string {
	var b strings.Builder
	b.WriteString("its container planted what git on the host would obey if run there (a nested repository, a .git or a git directory, whose config can run commands): ")
	for i, rel := range found {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(rel))
	}
	b.WriteString("; git-apex runs no git there: look, then remove ")
	if len(found) == 1 {
		b.WriteString("it")
	} else {
		b.WriteString("them")
	}
	for _, rel := range found {
		if cmd := RemoveCommand(worktree, rel); cmd != "" {
			b.WriteString("\n  " + cmd)
		} else {
			b.WriteString("\n  (by hand: its name holds control characters)")
		}
	}
	return b.String()
}

// Package planted finds what a full env's container planted in its
// worktree that git on the host would obey: nested repositories, .git
// entries and git directories, anywhere (see README "Containment").
package planted

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/nofollow"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// A container can plant, in its worktree, what git on the host obeys as
// soon as anything runs git there (a shell prompt, an editor): a nested
// repository (`git init src`) whose config sets core.fsmonitor, a .git
// file naming a git directory it made, or such a git directory, in any
// directory: tracked, ignored or untracked. git-apex never runs git
// inside them; exec (and shell) warn of them after each command, list
// warns from that check's record and from its git status, and doctor
// walks the whole worktree for them; doctor --fix removes them (Remove),
// following no link. No warning prints a command that deletes them: the
// container can swap a directory above one for a link before it runs.

// Untracked returns which of the untracked paths git status named in the
// worktree (slash-separated, "dir/" for a directory) is, or is in, a
// directory that is a nested repository (holds a .git) or a git
// directory, as paths relative to the worktree: an untracked directory
// itself, or, for an untracked HEAD or commondir in a directory git
// tracks (where git status names files, not the directory), that
// directory. It looks at those paths only: a few lstats, no walk.
func Untracked(worktree string, untracked []string) []string {
	var found []string
	for _, u := range untracked {
		d, isDir := strings.CutSuffix(u, "/")
		if !isDir {
			if base := path.Base(u); base != "HEAD" && base != "commondir" {
				continue
			}
			d = path.Dir(u)
		}
		if d == "" || d == "." || slices.Contains(found, d) {
			continue
		}
		if p := plantedAt(worktree, d); p != "" && !slices.Contains(found, p) {
			found = append(found, p)
		}
	}
	return found
}

// Anywhere walks the whole worktree (never following a link) for
// .git entries below its top, of any type (git tracks none), and git
// directories, at any depth, in tracked, ignored and untracked
// directories alike; NotCommitted then drops the ones the repository
// commits.
func Anywhere(worktree string) []string {
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
		case e.IsDir() && IsGitDir(p):
			found = append(found, rel)
			return fs.SkipDir
		}
		return nil
	})
	return found
}

// NotCommitted is found (Anywhere's, or Disarm's GitDirs) without
// the git directories the repository itself commits (a test fixture):
// those whose every file at their top (HEAD, config, commondir: what git
// reads there) is tracked in the worktree, unchanged, and as it is in
// the env's start commit (start: the host's, before its container ran)
// as git says (gitx.Repo.Pristine). A file committed since counts: the
// container's own commits reach the env's branch and the host's index
// through the exchange, so a config it committed is tracked and
// unchanged too. When git cannot say, or start is "", every one counts.
// A .git entry always counts: git tracks none. It is sorted.
func NotCommitted(ctx context.Context, g *gitx.Repo, worktree, start string, found []string) []string {
	tops := map[string][]string{}
	var all []string
	for _, rel := range found {
		if path.Base(rel) == ".git" {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(worktree, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				tops[rel] = append(tops[rel], path.Join(rel, e.Name()))
			}
		}
		all = append(all, tops[rel]...)
	}
	var pristine map[string]bool
	if len(all) > 0 {
		pristine, _ = g.Pristine(ctx, worktree, start, all)
	}
	var out []string
	for _, rel := range found {
		committed := len(tops[rel]) > 0
		for _, f := range tops[rel] {
			committed = committed && pristine[f]
		}
		if !committed {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// recordName is the file, in an env's sandbox directory, that keeps what
// the last check after an exchange found planted, for list to warn of.
const recordName = "planted"

// AfterExec checks what Disarm's walk after an exec or shell found that
// git would take for a git directory in a full env's mounted worktree
// (gitDirs), warns of those the repository does not commit with the
// command that removes them, and keeps them in the record in dir (the
// env's sandbox directory) for list; an empty record is removed. A
// copied env's record is kept by its exchange instead (Placed).
func AfterExec(ctx context.Context, r *repo.Repo, env *state.Env, dir string, gitDirs []string) {
	found := NotCommitted(ctx, r.Git, env.Path, env.StartCommit, gitDirs)
	keep(r, env.Identity, dir, found)
	if len(found) > 0 {
		r.Warnf("%s: %s", env.Identity, Describe(found))
	}
}

// Placed is AfterExec for the files a copied exchange placed in the
// host's worktree (slash-separated paths) for identity, whose start
// commit is start ("" for none: NotCommitted): the directories holding
// them that git would take for a git directory are added to the record
// in dir, with a warning.
func Placed(ctx context.Context, r *repo.Repo, identity, worktree, start, dir string, placed []string) {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range placed {
		for d := path.Dir(p); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			if IsGitDir(filepath.Join(worktree, filepath.FromSlash(d))) {
				dirs = append(dirs, d)
			}
		}
	}
	found := NotCommitted(ctx, r.Git, worktree, start, dirs)
	if len(found) == 0 {
		return
	}
	r.Warnf("%s: %s", identity, Describe(found))
	for _, old := range recorded(dir, worktree) {
		if !slices.Contains(found, old) {
			found = append(found, old)
		}
	}
	keep(r, identity, dir, found)
}

// keep writes found as the record in dir (NUL-separated), or removes the
// record when found is empty.
func keep(r *repo.Repo, identity, dir string, found []string) {
	p := filepath.Join(dir, recordName)
	if len(found) == 0 {
		os.Remove(p)
		return
	}
	if err := os.WriteFile(p, []byte(strings.Join(found, "\x00")), 0o600); err != nil {
		r.Warnf("%s: cannot keep what its container planted for list: %v", identity, err)
	}
}

// recorded is what the record in dir names that is still in worktree: a
// .git entry, or a git directory, with no link above it (a container may
// have swapped a directory for one since).
func recorded(dir, worktree string) []string {
	data, err := os.ReadFile(filepath.Join(dir, recordName))
	if err != nil || len(data) == 0 {
		return nil
	}
	var out []string
	for _, rel := range strings.Split(string(data), "\x00") {
		if !nofollow.Exists(worktree, rel) {
			continue
		}
		if path.Base(rel) == ".git" || gitDir(func(name string) bool { return nofollow.Exists(worktree, path.Join(rel, name)) }) {
			out = append(out, rel)
		}
	}
	return out
}

// plantedAt is d itself when it is a git directory, d/.git when it has
// one, else "".
func plantedAt(worktree, d string) string {
	dir := filepath.Join(worktree, filepath.FromSlash(d))
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return path.Join(d, ".git")
	}
	if IsGitDir(dir) {
		return d
	}
	return ""
}

// IsGitDir reports whether dir looks like a git directory to git
// (GitDirNames), by a few lstats.
func IsGitDir(dir string) bool {
	return gitDir(func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	})
}

// GitDirNames reports whether a directory holding the entries names
// looks like a git directory to git (IsGitDir, for a walk that has read
// them).
func GitDirNames(names []string) bool {
	return gitDir(func(name string) bool { return slices.Contains(names, name) })
}

// gitDir is the rule of git's own discovery: HEAD, and objects/ and
// refs/, or a commondir file naming the directory that holds them (a git
// directory split in two, as a linked worktree's is).
func gitDir(has func(name string) bool) bool {
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// gitDirFiles are the entries that make a directory a git directory, or
// that git reads there: what removing a planted git directory deletes
// when it is not a .git of its own, so that the files the repository
// tracks beside them stay.
var gitDirFiles = []string{"HEAD", "commondir", "config", "config.worktree", "objects", "refs"}

// Remove deletes what Untracked or Anywhere found at rels in worktree:
// a .git entry whole; of a git directory, only the entries of
// gitDirFiles (its directory may be one the repository tracks, doc/: its
// tracked files stay). It follows no link (nofollow.RemoveAll): the
// container that planted them may swap a directory above them for a link
// to the main checkout. git-apex removes them itself rather than print an
// rm to paste: a path printed is followed by the shell whenever it runs.
func Remove(worktree string, rels []string) error {
	var errs []error
	for _, rel := range rels {
		if path.Base(rel) == ".git" {
			errs = append(errs, nofollow.RemoveAll(worktree, rel))
			continue
		}
		for _, name := range gitDirFiles {
			errs = append(errs, nofollow.RemoveAll(worktree, path.Join(rel, name)))
		}
	}
	return errors.Join(errs...)
}

// Warn warns of what Untracked finds in a full env's worktree, and of
// what the record in dir (the env's sandbox directory) names that is
// still there (AfterExec, Placed: one small file read, no walk); list
// calls it with the untracked paths its git status reported.
func Warn(r *repo.Repo, env *state.Env, dir string, untracked []string) {
	found := Untracked(env.Path, untracked)
	for _, rel := range recorded(dir, env.Path) {
		if !slices.Contains(found, rel) {
			found = append(found, rel)
		}
	}
	slices.Sort(found)
	if len(found) > 0 {
		r.Warnf("%s: %s", env.Identity, Describe(found))
	}
}

// Describe says what Untracked and Anywhere found in an env's worktree, and
// the command that removes it (doctor --fix, through Remove).
func Describe(found []string) string {
	var b strings.Builder
	b.WriteString("its container planted what git on the host would obey if run there (a nested repository, a .git or a git directory, whose config can run commands): ")
	for i, rel := range found {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(rel))
	}
	b.WriteString("; git-apex runs no git there: look, then run `git apex doctor --fix` to remove ")
	if len(found) == 1 {
		b.WriteString("it")
	} else {
		b.WriteString("them")
	}
	b.WriteString(" (a git directory's own entries only)")
	return b.String()
}

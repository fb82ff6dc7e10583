package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// Unkept is what a removal would delete with an env's worktree that the
// trash cannot keep: the trash keeps the superproject's files as git
// objects of the main repository, and only the commit a submodule has
// checked out (as its gitlink), never what is inside a repository of its
// own.
type Unkept struct {
	// Nested are the untracked nested repositories, as dir/: git records
	// only the commit one has checked out, and runs nothing inside one.
	Nested []string `json:"nested,omitempty"`
	// DirtySubmodules are the submodules whose own working tree has
	// changes or untracked files.
	DirtySubmodules []string `json:"dirty_submodules,omitempty"`
	// SubmoduleCommits name the submodules whose git directory (under
	// the env's, deleted with the worktree) holds commits that neither
	// the main repository's git directory of that submodule nor the
	// submodule's remote-tracking refs hold, with what holds them there:
	// "lib (HEAD 1a2b3c4, branch work)".
	SubmoduleCommits []string `json:"submodule_commits,omitempty"`
	// Operation is the git operation in progress in the worktree, or
	// its unmerged index entries: "a merge in progress (MERGE_HEAD
	// 1a2b3c4d5e6f), with 1 unmerged path". The trash keeps files and
	// the index's tree, never MERGE_HEAD, the rebase's todo or the
	// conflict's stages, as git stash refuses an index that needs merge.
	Operation string `json:"operation,omitempty"`
	// goOn is how to finish or abort Operation, for the refusal.
	goOn string

	// commits are SubmoduleCommits as found: where they are and what
	// holds them, for KeepSubmoduleCommits.
	commits []submoduleCommits
}

// submoduleCommits are the commits found nowhere else of one submodule
// git directory.
type submoduleCommits struct {
	name    string // the submodule's name: lib
	gitDir  string // the env's git directory of it, deleted with the worktree
	mainDir string // the main repository's git directory of it ("" when there is none)
	tips    []tip  // what holds them there
	said    string // its part of SubmoduleCommits
}

// tip is a commit of a submodule git directory and what holds it there:
// "HEAD 1a2b3c4", "branch work", "recorded 5d6e7f8".
type tip struct{ hash, name string }

// names are the names of tips.
func names(tips []tip) []string {
	out := make([]string, len(tips))
	for i, t := range tips {
		out[i] = t.name
	}
	return out
}

// Empty reports whether nothing would be lost.
func (u Unkept) Empty() bool {
	return len(u.Nested)+len(u.DirtySubmodules)+len(u.SubmoduleCommits) == 0 && u.Operation == ""
}

// String names every part: `the nested repository "dep/"; changes inside
// submodule "lib"; commits of submodule lib (HEAD 1a2b3c4) that ...".
func (u Unkept) String() string {
	var parts []string
	if len(u.Nested) > 0 {
		parts = append(parts, plural(len(u.Nested), "the nested repository ", "the nested repositories ")+quoted(u.Nested))
	}
	if len(u.DirtySubmodules) > 0 {
		parts = append(parts, "changes or untracked files inside "+plural(len(u.DirtySubmodules), "submodule ", "submodules ")+quoted(u.DirtySubmodules))
	}
	if len(u.SubmoduleCommits) > 0 {
		parts = append(parts, "commits of "+plural(len(u.SubmoduleCommits), "submodule ", "submodules ")+strings.Join(u.SubmoduleCommits, ", ")+
			" that neither the main repository's copy of the submodule nor its remote holds")
	}
	if u.Operation != "" {
		parts = append(parts, u.Operation)
	}
	return strings.Join(parts, "; ")
}

// GoOn is how to finish or abort the operation in progress in the
// worktree at dir: "finish it (`git commit`) or abort it (`git merge
// --abort`) in dir"; "" when none is.
func (u Unkept) GoOn(dir string) string {
	if u.Operation == "" {
		return ""
	}
	return u.goOn + " in " + dir
}

// quoted joins paths, each quoted as Go quotes a string: what git finds
// in a worktree is named as it is, never as raw bytes for the terminal
// (a full env's container chooses the names).
func quoted(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = strconv.Quote(p)
	}
	return strings.Join(q, ", ")
}

// Unkeepable is u less the submodule commits that KeepSubmoduleCommits
// can keep (those of submodules the main repository has a git directory
// of): what a forced removal would still delete unkept.
func (u Unkept) Unkeepable() Unkept {
	left := Unkept{Nested: u.Nested, DirtySubmodules: u.DirtySubmodules, Operation: u.Operation, goOn: u.goOn}
	for _, said := range u.SubmoduleCommits {
		if !slices.ContainsFunc(u.commits, func(w submoduleCommits) bool { return w.said == said && w.mainDir != "" }) {
			left.SubmoduleCommits = append(left.SubmoduleCommits, said)
		}
	}
	return left
}

// KeptCommits says where a forced removal kept the commits of a
// submodule that only the env's git directory of it held: in the main
// repository's git directory of the submodule, one ref per commit.
type KeptCommits struct {
	Submodule string   `json:"submodule"` // its name: lib
	GitDir    string   `json:"git_dir"`   // the main repository's git directory of it
	Refs      []string `json:"refs"`      // refs/apex/kept/<identity>/<unix ms>/<n>, one per commit
	Held      []string `json:"held"`      // what held each in the env: "HEAD 1a2b3c4", "branch work"
}

// keptPrefix is where KeepSubmoduleCommits puts the commits it keeps, in
// the main repository's git directory of a submodule. They are not
// trash entries: nothing expires them.
const keptPrefix = "refs/apex/kept/"

// KeepSubmoduleCommits fetches the submodule commits of u that only the
// env's git directories hold into the main repository's git directory of
// each submodule (those of submodules it has none of stay unkept: see
// Unkeepable), under refs/apex/kept/<identity>/<unix ms of now>/<n>,
// running no hooks, and says where.
func KeepSubmoduleCommits(ctx context.Context, lk *gitx.Locked, u Unkept, identity string, now time.Time) ([]KeptCommits, error) {
	var kept []KeptCommits
	for _, w := range u.commits {
		if w.mainDir == "" {
			continue
		}
		k := KeptCommits{Submodule: w.name, GitDir: w.mainDir, Held: names(w.tips)}
		args := []string{"--git-dir=" + w.mainDir, "-c", "core.hooksPath=" + os.DevNull, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", w.gitDir}
		for i, t := range w.tips {
			ref := fmt.Sprintf("%s%s/%d/%d", keptPrefix, identity, now.UnixMilli(), i+1)
			k.Refs = append(k.Refs, ref)
			args = append(args, t.hash+":"+ref)
		}
		if _, err := lk.Run(ctx, lk.CommonDir, nil, args...); err != nil {
			return kept, fmt.Errorf("cannot keep the commits of submodule %s in %s: %w", w.name, w.mainDir, err)
		}
		kept = append(kept, k)
	}
	return kept, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FindUnkept reads what a removal of the worktree at dir would delete
// that the trash cannot keep. A full env's (contained) submodules are
// never initialised and git is not run inside them: only its nested
// repositories are looked for, as the trash looks for them.
func FindUnkept(ctx context.Context, lk *gitx.Locked, dir string, contained bool) (Unkept, error) {
	var u Unkept
	var err error
	if u.Nested, err = trash.NestedRepos(ctx, lk, dir); err != nil {
		return u, err
	}
	if contained {
		return u, nil
	}
	admin, err := lk.Run(ctx, dir, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return u, err
	}
	admin = strings.TrimSpace(admin)
	if u.Operation, u.goOn, err = inProgress(ctx, lk, dir, admin); err != nil {
		return u, err
	}
	if admin == lk.CommonDir { // the main checkout: its submodules are the main repository's own
		return u, nil
	}
	// git gives a submodule it initialises in a worktree its git directory
	// there: with none, no submodule has changes or commits to lose.
	gitDirs := submoduleGitDirs(filepath.Join(admin, "modules"))
	if len(gitDirs) == 0 {
		return u, nil
	}
	if u.DirtySubmodules, err = dirtySubmodules(ctx, lk, dir); err != nil {
		return u, err
	}
	recorded, err := gitlinks(ctx, lk, dir)
	if err != nil {
		return u, err
	}
	for _, gitDir := range gitDirs {
		rel, err := filepath.Rel(admin, gitDir)
		if err != nil {
			return u, err
		}
		work := submoduleCommits{name: strings.ReplaceAll(strings.TrimPrefix(filepath.ToSlash(rel), "modules/"), "/modules/", "/"), gitDir: gitDir}
		if mainDir := filepath.Join(lk.CommonDir, rel); hostpath.Exists(filepath.Join(mainDir, "HEAD")) {
			work.mainDir = mainDir
		}
		tips, err := unheldTips(ctx, lk, gitDir, work.mainDir, recorded[submodulePath(ctx, lk, gitDir, dir)])
		if err != nil { // what cannot be read cannot be found held, nor kept
			u.SubmoduleCommits = append(u.SubmoduleCommits, fmt.Sprintf("%s (its git directory %s cannot be read: %v)", work.name, gitDir, err))
		} else if len(tips) > 0 {
			work.tips, work.said = tips, work.name+" ("+strings.Join(names(tips), ", ")+")"
			u.commits = append(u.commits, work)
			u.SubmoduleCommits = append(u.SubmoduleCommits, work.said)
		}
	}
	return u, nil
}

// dirtySubmodules lists the submodules of the worktree at dir whose own
// working tree has changes or untracked files, as git status reports them
// (nested submodules count for the one that holds them).
func dirtySubmodules(ctx context.Context, lk *gitx.Locked, dir string) ([]string, error) {
	out, err := lk.Run(ctx, dir, nil, "status", "--porcelain=v2", "-z", "--untracked-files=normal", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	var dirty []string
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if !strings.HasPrefix(f, "1 ") && !strings.HasPrefix(f, "2 ") {
			continue
		}
		// 1 XY sub mH mI mW hH hI path; 2 XY sub mH mI mW hH hI Xscore path, then the source path.
		n := 9
		if f[0] == '2' {
			n, i = 10, i+1
		}
		parts := strings.SplitN(f, " ", n)
		if len(parts) == n && len(parts[2]) == 4 && parts[2][0] == 'S' && (parts[2][2] == 'M' || parts[2][3] == 'U') {
			dirty = append(dirty, parts[n-1])
		}
	}
	return dirty, nil
}

// submoduleGitDirs lists the git directories under root (an env's
// modules/ directory), nested submodules' (under a git directory's own
// modules/) included. A submodule's name may hold slashes, so every
// directory that is not a git directory is looked into.
func submoduleGitDirs(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if !e.IsDir() {
			continue
		}
		if hostpath.Exists(filepath.Join(p, "HEAD")) && hostpath.Exists(filepath.Join(p, "objects")) {
			dirs = append(dirs, p)
			dirs = append(dirs, submoduleGitDirs(filepath.Join(p, "modules"))...)
		} else {
			dirs = append(dirs, submoduleGitDirs(p)...)
		}
	}
	return dirs
}

// gitlinks reads the commits the worktree at dir records for its
// submodules, in its HEAD and in its index, by path: those a branch
// points at once committed, though the submodule has moved on since.
func gitlinks(ctx context.Context, lk *gitx.Locked, dir string) (map[string][]string, error) {
	links := map[string][]string{}
	add := func(out string, field int) {
		for _, entry := range strings.Split(out, "\x00") {
			meta, path, ok := strings.Cut(entry, "\t")
			if f := strings.Fields(meta); ok && len(f) > field && f[0] == "160000" && !slices.Contains(links[path], f[field]) {
				links[path] = append(links[path], f[field])
			}
		}
	}
	index, err := lk.Run(ctx, dir, nil, "ls-files", "-s", "-z")
	if err != nil {
		return nil, err
	}
	add(index, 1) // 160000 <commit> <stage>\t<path>
	if head, err := lk.Run(ctx, dir, nil, "ls-tree", "-r", "-z", "HEAD"); err == nil {
		add(head, 2) // 160000 commit <commit>\t<path>
	}
	return links, nil
}

// submodulePath is the path, relative to the worktree at dir and
// slash-separated, of the working tree of the submodule git directory
// gitDir (its core.worktree, relative to it); "" when it has none.
func submodulePath(ctx context.Context, lk *gitx.Locked, gitDir, dir string) string {
	out, err := lk.Run(ctx, lk.CommonDir, nil, "--git-dir="+gitDir, "config", "--get", "core.worktree")
	if err != nil || strings.TrimSpace(out) == "" {
		return ""
	}
	wt := strings.TrimSpace(out)
	if !filepath.IsAbs(wt) {
		wt = filepath.Join(gitDir, wt)
	}
	rel, err := filepath.Rel(dir, wt)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// unheldTips returns the HEAD and refs (but remote-tracking ones) of the
// submodule git directory gitDir, and the commits of recorded it has
// (those the superproject records for it), whose commits its
// remote-tracking refs do not hold and the git directory mainDir (the
// main repository's of the same submodule, "" when there is none) does
// not hold from any ref.
func unheldTips(ctx context.Context, lk *gitx.Locked, gitDir, mainDir string, recorded []string) ([]tip, error) {
	in := func(dir string, args ...string) (string, error) {
		return lk.Run(ctx, lk.CommonDir, nil, append([]string{"--git-dir=" + dir}, args...)...)
	}
	refs, err := in(gitDir, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	var tips []tip
	if head, err := in(gitDir, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err == nil {
		tips = append(tips, tip{strings.TrimSpace(head), "HEAD " + repo.Short(strings.TrimSpace(head))})
	}
	for _, line := range strings.Split(strings.TrimSpace(refs), "\n") {
		hash, ref, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(ref, "refs/remotes/") {
			continue
		}
		name := ref
		switch {
		case strings.HasPrefix(ref, "refs/heads/"):
			name = "branch " + strings.TrimPrefix(ref, "refs/heads/")
		case strings.HasPrefix(ref, "refs/tags/"):
			name = "tag " + strings.TrimPrefix(ref, "refs/tags/")
		}
		tips = append(tips, tip{hash, name})
	}
	for _, commit := range recorded {
		if slices.ContainsFunc(tips, func(t tip) bool { return t.hash == commit }) {
			continue
		}
		if _, err := in(gitDir, "cat-file", "-e", commit+"^{commit}"); err == nil { // one it never had is not lost with it
			tips = append(tips, tip{commit, "recorded " + repo.Short(commit)})
		}
	}
	held := map[string]bool{}
	var unheld []tip
	for _, t := range tips {
		ok, seen := held[t.hash]
		if !seen {
			out, err := in(gitDir, "rev-list", "-n", "1", t.hash, "--not", "--remotes")
			if err != nil {
				return nil, err
			}
			ok = strings.TrimSpace(out) == ""
			if !ok && mainDir != "" {
				// A commit the main repository's copy lacks is an error here.
				out, err := in(mainDir, "rev-list", "-n", "1", t.hash, "--not", "--all")
				ok = err == nil && strings.TrimSpace(out) == ""
			}
			held[t.hash] = ok
		}
		if !ok {
			unheld = append(unheld, t)
		}
	}
	return unheld, nil
}

// inProgress names the git operation in progress in the worktree at dir,
// whose git directory is admin (a merge, rebase, cherry-pick, revert or
// git am stopped there), with the count of its index's unmerged paths,
// and says how to finish or abort it; "" when none is and nothing is
// unmerged.
func inProgress(ctx context.Context, lk *gitx.Locked, dir, admin string) (what, goOn string, err error) {
	unmerged, err := lk.Run(ctx, dir, nil, "ls-files", "-z", "--unmerged")
	if err != nil {
		return "", "", err
	}
	paths := map[string]bool{}
	for _, entry := range strings.Split(unmerged, "\x00") {
		if _, path, ok := strings.Cut(entry, "\t"); ok {
			paths[path] = true
		}
	}
	exists := func(name string) bool { return hostpath.Exists(filepath.Join(admin, name)) }
	head := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(admin, name))
		return fmt.Sprintf(" (%s %.12s)", name, strings.TrimSpace(string(b)))
	}
	switch {
	case exists("MERGE_HEAD"):
		what, goOn = "a merge in progress"+head("MERGE_HEAD"), "finish it (`git commit`) or abort it (`git merge --abort`)"
	case exists("CHERRY_PICK_HEAD"):
		what, goOn = "a cherry-pick in progress", "finish it (`git cherry-pick --continue`) or abort it (`git cherry-pick --abort`)"
	case exists("REVERT_HEAD"):
		what, goOn = "a revert in progress", "finish it (`git revert --continue`) or abort it (`git revert --abort`)"
	case exists("rebase-apply/applying"):
		what, goOn = "a git am in progress", "finish it (`git am --continue`) or abort it (`git am --abort`)"
	case exists("rebase-merge") || exists("rebase-apply"):
		what, goOn = "a rebase in progress", "finish it (`git rebase --continue`) or abort it (`git rebase --abort`)"
	case len(paths) > 0:
		return words.Count(len(paths), "unmerged path") + " in the index", "resolve them and `git add` them, or undo the merge that left them (`git reset --merge`)", nil
	default:
		return "", "", nil
	}
	if len(paths) > 0 {
		what += ", with " + words.Count(len(paths), "unmerged path")
	}
	return what, goOn, nil
}

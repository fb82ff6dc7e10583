package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/exitcode"
)

// Ref is a resolved reference.
type Ref struct {
	Hash   string // object it points at
	Target string // for a symbolic ref, the full name it points to
}

// Refs resolves the given full ref names (refs/heads/x, refs/remotes/origin/HEAD)
// in one git call. Names that do not exist are absent from the map.
func (r *Repo) Refs(ctx context.Context, names ...string) (map[string]Ref, error) {
	args := append([]string{"for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)"}, names...)
	out, err := r.readIn(ctx, r.CommonDir, args...)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	refs := make(map[string]Ref)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Split(line, "\x00")
		// for-each-ref matches prefixes too (refs/heads/x matches refs/heads/x/y).
		if len(fields) == 3 && want[fields[0]] {
			refs[fields[0]] = Ref{Hash: fields[1], Target: fields[2]}
		}
	}
	return refs, nil
}

// Commit resolves a commit-ish to a full commit hash. An unknown name is a
// usage error.
func (r *Repo) Commit(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", exitcode.New(exitcode.Usage, "invalid commit %q: it must not start with '-'", rev)
	}
	out, err := r.readIn(ctx, r.CommonDir, "rev-parse", "--verify", "-q", "--end-of-options", rev+"^{commit}")
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.Status == 1 {
			return "", exitcode.New(exitcode.Usage, "cannot find commit %q in this repository", rev)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Unheld counts the commits reachable from rev that no local branch (other
// than except, a short branch name, when set), no remote-tracking branch
// and none of the commits reached holds: the work that would be lost if
// rev went away.
func (r *Repo) Unheld(ctx context.Context, rev, except string, reached ...string) (int, error) {
	args := append([]string{"rev-list", "--count", rev, "--not"}, reached...)
	if except != "" {
		// Before --branches, git matches --exclude without "refs/heads/".
		args = append(args, "--exclude="+except)
	}
	args = append(args, "--branches", "--remotes")
	out, err := r.readIn(ctx, r.CommonDir, args...)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		return 0, fmt.Errorf("cannot read git rev-list --count output %q", out)
	}
	return n, nil
}

// Changes counts what `git status` reports in a working tree; ignored files
// are not counted, as `git worktree remove` does not count them.
type Changes struct {
	Staged    int // changes in the index
	Modified  int // changes in the working tree, unmerged paths included
	Untracked int // untracked files and directories
	Deleted   int // of Modified, tracked files gone from the working tree
}

// Dirty reports whether anything would be lost by deleting the tree.
func (c Changes) Dirty() bool { return c.Staged+c.Modified+c.Untracked > 0 }

// OnlyDeleted reports whether the only changes are tracked files gone
// from the working tree, as a `git worktree remove` cut short leaves it:
// their content is still in the commit.
func (c Changes) OnlyDeleted() bool {
	return c.Staged == 0 && c.Untracked == 0 && c.Modified == c.Deleted
}

func (c Changes) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Modified, "modified"}, {c.Staged, "staged"}, {c.Untracked, "untracked"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "clean"
	}
	return strings.Join(parts, ", ")
}

// Files is String as a phrase about files: "1 untracked file",
// "2 modified, 1 untracked files".
func (c Changes) Files() string {
	if c.Staged+c.Modified+c.Untracked == 1 {
		return c.String() + " file"
	}
	return c.String() + " files"
}

// InitSubmodules initialises and checks out the submodules of the
// working tree at dir, recursively, when it has any.
func (r *Repo) InitSubmodules(ctx context.Context, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, ".gitmodules")); err != nil {
		return nil
	}
	_, err := r.runIn(ctx, dir, "submodule", "--quiet", "update", "--init", "--recursive")
	return err
}

// MergedInto returns the local branches whose tips are reachable from
// base, each with its tip, in one git call.
func (r *Repo) MergedInto(ctx context.Context, base string) (map[string]string, error) {
	out, err := r.readIn(ctx, r.CommonDir, "for-each-ref", "--merged="+base, "--format=%(refname:short)%00%(objectname)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	merged := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, tip, ok := strings.Cut(line, "\x00"); ok {
			merged[name] = tip
		}
	}
	return merged, nil
}

// Standing is a working tree's uncommitted work and where its branch
// stands against a base.
type Standing struct {
	Changes
	Counted        bool     // Ahead and Behind are known
	Ahead          int      // commits on the branch that the base lacks
	Behind         int      // commits on the base that the branch lacks
	UntrackedPaths []string // what git named untracked, relative and slash-separated: "dir/" for a directory
	Ignored        int      // ignored files and directories (read only with StatusOptions.Ignored)
	Head           string   // the commit checked out; "" before the first commit
}

// StatusOptions say what Status reads.
type StatusOptions struct {
	Branch, Base string // count Branch's commits ahead of and behind Base, when both are set
	BaseIsLocal  bool   // Base is a local branch (else a remote-tracking one like origin/main)
	Contained    bool   // a container writes in the working tree: see Repo.Status
	Ignored      bool   // count ignored files too (Standing.Ignored)
}

// Status reads what `git status` reports in the working tree at dir and,
// when o names a branch and a base, counts the branch's commits ahead of
// and behind the base in the same single git process: the base is given
// to git status as the branch's upstream with -c, so nothing is written
// to the repository's config. When a container writes in the tree (a
// full env: o.Contained), its submodules' .git files could point
// anywhere, so git does not look inside them (a submodule whose commit
// changed still counts).
func (r *Repo) Status(ctx context.Context, dir string, o StatusOptions) (Standing, error) {
	submodules := "--ignore-submodules=none"
	if o.Contained {
		submodules = "--ignore-submodules=dirty"
	}
	args := []string{"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", submodules}
	if o.Ignored {
		args = append(args, "--ignored")
	}
	if o.Branch != "" && o.Base != "" {
		remote, merge := ".", "refs/heads/"+o.Base
		if !o.BaseIsLocal {
			name, rest, _ := strings.Cut(o.Base, "/")
			remote, merge = name, "refs/heads/"+rest
		}
		args = append([]string{"-c", "branch." + o.Branch + ".remote=" + remote, "-c", "branch." + o.Branch + ".merge=" + merge}, args...)
	}
	out, err := r.readIn(ctx, dir, args...)
	if err != nil {
		return Standing{}, err
	}
	return parseStatusV2(out), nil
}

// parseStatusV2 reads `git status --porcelain=v2 --branch -z`.
func parseStatusV2(out string) Standing {
	var s Standing
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, "# branch.oid ") && f != "# branch.oid (initial)":
			s.Head = strings.TrimPrefix(f, "# branch.oid ")
		case strings.HasPrefix(f, "# branch.ab "):
			var a, b int
			if _, err := fmt.Sscanf(f, "# branch.ab +%d -%d", &a, &b); err == nil {
				s.Counted, s.Ahead, s.Behind = true, a, b
			}
		case strings.HasPrefix(f, "? "):
			s.Untracked, s.UntrackedPaths = s.Untracked+1, append(s.UntrackedPaths, f[2:])
		case strings.HasPrefix(f, "! "):
			s.Ignored++
		case strings.HasPrefix(f, "u "):
			s.Modified++
		case strings.HasPrefix(f, "1 "), strings.HasPrefix(f, "2 "):
			if len(f) >= 4 {
				if f[2] != '.' {
					s.Staged++
				}
				if f[3] != '.' {
					s.Modified++
				}
				if f[3] == 'D' {
					s.Deleted++
				}
			}
			if f[0] == '2' {
				i++ // a rename or copy carries its source path in the next field
			}
		}
	}
	return s
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.readIn(ctx, r.CommonDir, "merge-base", "--is-ancestor", a, b)
	var gerr *Error
	if errors.As(err, &gerr) && gerr.Status == 1 {
		return false, nil
	}
	return err == nil, err
}

// InitPrivateIndex writes the index of the git directory gitDir (a full
// env's private one, just made by git-apex and never yet used by anything
// else) from commit's tree, without touching any working tree.
func (r *Repo) InitPrivateIndex(ctx context.Context, gitDir, commit string) error {
	_, err := r.runIn(ctx, r.CommonDir, "--git-dir="+gitDir, "read-tree", commit)
	return err
}

// PackCommit writes into packDir a pack of commit and all its tree holds,
// none of its history (what a shallow git directory at commit needs), or
// with since, what one that has since lacks to have commit.
func (r *Repo) PackCommit(ctx context.Context, commit, since, packDir string) error {
	revs := []string{"-n", "1", commit}
	if since != "" {
		revs = []string{commit, "^" + since}
	}
	objects, err := r.readIn(ctx, r.CommonDir, append([]string{"rev-list", "--objects"}, revs...)...)
	if err != nil {
		return err
	}
	c := r.command(r.CommonDir, []string{"pack-objects", "-q", filepath.Join(packDir, "pack")}, false)
	c.stdin = strings.NewReader(objects)
	_, err = run(ctx, c)
	return err
}

// Gitlinks lists the paths of commit's tree that are submodules.
func (r *Repo) Gitlinks(ctx context.Context, commit string) ([]string, error) {
	out, err := r.readIn(ctx, r.CommonDir, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, entry := range strings.Split(out, "\x00") {
		if meta, path, ok := strings.Cut(entry, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			paths = append(paths, path)
		}
	}
	return paths, nil
}

// Summary is what a reader of a worktree's changes wants to see: `git
// status --short --branch`, and the diff stat of the working tree
// against its merge base with base (against HEAD when base is ""). No
// external diff or text conversion runs.
func (r *Repo) Summary(ctx context.Context, dir, base string) (status, diffstat string, err error) {
	status, err = r.readIn(ctx, dir, "status", "--short", "--branch", "--untracked-files=normal")
	if err != nil {
		return "", "", err
	}
	args := []string{"diff", "--stat", "--no-ext-diff", "--no-textconv"}
	if base != "" {
		args = append(args, "--merge-base", base)
	} else {
		args = append(args, "HEAD")
	}
	diffstat, err = r.readIn(ctx, dir, args...)
	return status, diffstat, err
}

// Pristine reports which of paths (slash-separated, relative to the
// working tree at dir) are tracked there, unchanged, and as they are in
// commit since: one git ls-files, which reads the index and stats the
// files, and, when any is, one git diff of the index against since. With
// since "" none is.
func (r *Repo) Pristine(ctx context.Context, dir, since string, paths []string) (map[string]bool, error) {
	if since == "" {
		return map[string]bool{}, nil
	}
	var literal []string
	for _, p := range paths {
		literal = append(literal, ":(literal)"+p)
	}
	args := append([]string{"ls-files", "-z", "-t", "-c", "-m", "--"}, literal...)
	out, err := r.readIn(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	tracked, changed := map[string]bool{}, map[string]bool{}
	for _, f := range strings.Split(out, "\x00") {
		tag, p, ok := strings.Cut(f, " ")
		switch {
		case ok && tag == "H":
			tracked[p] = true
		case ok && tag == "C":
			changed[p] = true
		}
	}
	for p := range changed {
		delete(tracked, p)
	}
	if len(tracked) == 0 {
		return tracked, nil
	}
	diff, err := r.readIn(ctx, dir, append([]string{"diff", "--cached", "--name-only", "--no-renames", "-z", since, "--"}, literal...)...)
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(diff, "\x00") {
		delete(tracked, p)
	}
	return tracked, nil
}

// Package trash keeps what a discarding command would delete: the
// uncommitted work of an env's worktree (staged changes, changes to
// tracked files, untracked files that are not ignored), recorded as git
// objects under refs/apex/trash/<identity>/<unix ms> until it expires,
// and put back by `git apex restore`.
//
// An entry is one commit, made as `git stash create` makes one, plus the
// untracked files: its tree is the working tree (every file `git add -A`
// would take, through a temporary index), its first parent the commit
// checked out (the branch's tip), its second a commit of the index's tree,
// so that staged state comes back too. Its message carries what restore
// needs to make the env again: identity, branch, base, mode and path.
// Nothing is copied: the objects are those git would write for a commit.
package trash

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
)

// Prefix is where the entries' refs live.
const Prefix = "refs/apex/trash/"

// Entry is one kept piece of work.
type Entry struct {
	Identity string    `json:"identity"`
	Ref      string    `json:"ref"`
	Commit   string    `json:"commit"` // its working tree; ^1 the commit checked out, ^2 the index
	At       time.Time `json:"discarded_at"`
	Branch   string    `json:"branch,omitempty"`
	Base     string    `json:"base,omitempty"`
	Head     string    `json:"head"` // the commit checked out: the branch's tip then, unless Tip is set
	Mode     string    `json:"mode"`
	Path     string    `json:"path"`
	Files    int       `json:"files"` // paths that differ from Head, staged or not
	// Commits counts the commits reachable from Head that, when the entry
	// was made, no branch (but the one the discard deleted) and no remote
	// held: a detached HEAD's own, or those of a deleted branch. The
	// entry's commit, whose first parent is Head, keeps them reachable.
	Commits int `json:"commits,omitempty"`
	// Tip is the commit Branch was at when HEAD was not (detached by hand
	// off it): a restore makes the branch again there, and checks Head out
	// detached. "" when HEAD was on the branch's tip.
	Tip string `json:"tip,omitempty"`
	// NotKept are the untracked nested repositories (as dir/) that the
	// discard deleted without keeping them (see workingTree); only in the
	// result of the discard that made the entry.
	NotKept []string `json:"not_kept,omitempty"`
	// TooBig are the files over MaxFile, untracked or changed, whose
	// content the discard deleted without keeping it; only in the result
	// of the discard that made the entry.
	TooBig []Big `json:"too_big,omitempty"`
	// OverTotal are the files, untracked or changed, each within MaxFile,
	// that did not fit in MaxTotal with those before them, whose content
	// the discard deleted without keeping it; only in the result of the
	// discard that made the entry.
	OverTotal []Big `json:"over_total,omitempty"`
	// held is what the files kept so far hold, in bytes, against MaxTotal.
	held int64
	// IgnoredNotKept are the ignored files (and directories, as dir/, of
	// which nothing was kept) that the discard deleted without keeping
	// them: those no pattern of keepIgnored (Record) matched; only in the
	// result of the discard that made the entry.
	IgnoredNotKept []string `json:"ignored_not_kept,omitempty"`
}

// Big is a file the trash did not keep for its size.
type Big struct {
	Path string `json:"path"` // relative to the worktree
	Size int64  `json:"size"` // bytes, as lstat says: a sparse file's whole size
}

// MaxFile is the most one file may hold for the trash to keep it: git
// reads and hashes each file it keeps, under the repository lock, and a
// container makes a sparse file of terabytes in an instant (3 GiB held a
// removal, and every command waiting on the lock, 82 s). Bigger files
// are deleted with the worktree, and named (Entry.TooBig).
const MaxFile = 100 << 20

// MaxTotal is the most all the files one entry keeps may hold together:
// MaxFile bounds one file, not their number, and a container makes 100
// sparse files of 99 MiB in an instant (hashing them held a removal,
// and every command waiting on the lock, 68 s). The files, in git's
// order, are kept while they fit; those that do not are deleted with
// the worktree, and named (Entry.OverTotal). It is hashed well within
// gitx.ContainedLimit, the time git has in a full env's worktree.
const MaxTotal = 256 << 20

// admit reports whether the trash keeps a file of size bytes at path: one
// over MaxFile goes to TooBig, one that would take the entry past
// MaxTotal to OverTotal.
func (e *Entry) admit(path string, size int64) bool {
	switch {
	case size > MaxFile:
		e.TooBig = append(e.TooBig, Big{Path: path, Size: size})
	case e.held+size > MaxTotal:
		e.OverTotal = append(e.OverTotal, Big{Path: path, Size: size})
	default:
		e.held += size
		return true
	}
	return false
}

// leftSome reports whether e left out anything (NotKept, TooBig,
// OverTotal): an entry is made for that alone, for its note to name it.
func (e *Entry) leftSome() bool { return len(e.NotKept)+len(e.TooBig)+len(e.OverTotal) > 0 }

// The lines of an entry's message that say what it was.
const (
	keyIdentity = "Apex-Identity"
	keyBranch   = "Apex-Branch"
	keyBase     = "Apex-Base"
	keyMode     = "Apex-Mode"
	keyPath     = "Apex-Path"
	keyFiles    = "Apex-Files"
	keyCommits  = "Apex-Commits"
	keyTip      = "Apex-Tip"
)

// committer is who the entries' commits are by: the user's identity may
// not be configured, and the commits are git-apex's own.
var committer = []string{"GIT_AUTHOR_NAME=git-apex", "GIT_AUTHOR_EMAIL=git-apex@localhost",
	"GIT_COMMITTER_NAME=git-apex", "GIT_COMMITTER_EMAIL=git-apex@localhost"}

// Options are what a discard asks Record to keep beyond the uncommitted
// work of a worktree.
type Options struct {
	// Contained says a container wrote in the worktree, as
	// gitx.StatusOptions says.
	Contained bool
	// KeepIgnored are gitignore patterns ([trash].keep_ignored): the
	// ignored files they match are kept too, each up to MaxFile.
	KeepIgnored []string
	// DeletesBranch says the discard deletes the branch what.Branch too:
	// the commits only it holds are kept, as a detached HEAD's are.
	DeletesBranch bool
	// Made is the commit the worktree was made at (a pool slot's), or
	// "": the commits it reaches are not the worktree's own.
	Made string
}

// Record keeps the uncommitted work of the worktree at what.Path, and
// the commits only its HEAD holds, as an entry made at now, and returns
// it; nil when there is nothing to lose: a git status finds the tree
// clean (opts.Contained: a container wrote in it, as gitx.StatusOptions
// says), opts.KeepIgnored is empty and every commit HEAD reaches is held
// by a branch (but what.Branch with opts.DeletesBranch) or a remote, or
// is reached from opts.Made; or the index and every file not ignored
// are as the commit checked out, no ignored file matches KeepIgnored and
// no commit is held by HEAD alone. The entry names the ignored files it
// did not keep. what gives Identity, Branch, Base and Mode. A status
// that fails (a trap.Error, say) is returned as it is, and so is a git
// that does not finish within the worktree's gitx.Bound; work that
// cannot be kept is a refusal (exit 3): the caller deletes nothing.
func Record(ctx context.Context, lk *gitx.Locked, what Entry, opts Options, now time.Time) (*Entry, error) {
	changes, err := lk.Status(ctx, what.Path, gitx.StatusOptions{Contained: opts.Contained})
	if err != nil {
		return nil, err
	}
	commits, err := unheld(ctx, lk, what, opts)
	if err != nil || !changes.Dirty() && len(opts.KeepIgnored) == 0 && commits == 0 {
		return nil, err
	}
	e, err := record(ctx, lk, what, opts.KeepIgnored, commits, now)
	if timeout := (*gitx.TimeoutError)(nil); errors.As(err, &timeout) {
		return nil, err // the caller decides: a forced removal goes on without the entry
	}
	if err != nil {
		lost := changes.Files()
		switch {
		case !changes.Dirty() && commits > 0:
			lost = "commits that no branch or remote holds"
		case !changes.Dirty():
			lost = "ignored files that [trash].keep_ignored names"
		}
		return nil, exitcode.New(exitcode.Refused, "cannot keep the %s of %s in the trash, so nothing was deleted: %v; commit or stash them, then retry",
			lost, what.Identity, err)
	}
	return e, nil
}

// unheld counts the commits reachable from the HEAD of the worktree at
// what.Path, and not from opts.Made, that no branch (but what.Branch
// when opts.DeletesBranch) and no remote holds. A worktree with no
// commit checked out holds none.
func unheld(ctx context.Context, lk *gitx.Locked, what Entry, opts Options) (int, error) {
	head, err := lk.WorktreeHead(ctx, what.Path)
	if err != nil {
		return 0, nil // no commit checked out (an unborn HEAD): none to keep
	}
	var reached []string
	if opts.Made != "" {
		reached = append(reached, opts.Made)
	}
	except := ""
	if opts.DeletesBranch {
		except = what.Branch
	}
	return lk.Unheld(ctx, head, except, reached...)
}

// detachedTip is the commit branch is at when it is not head (HEAD
// detached off it by hand); "" when it is, or there is no such branch.
func detachedTip(ctx context.Context, lk *gitx.Locked, branch, head string) (string, error) {
	if branch == "" {
		return "", nil
	}
	refs, err := lk.Refs(ctx, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	if ref, ok := refs["refs/heads/"+branch]; ok && ref.Hash != head {
		return ref.Hash, nil
	}
	return "", nil
}

// BranchTip is the commit a restore makes the entry's branch again at.
func (e Entry) BranchTip() string {
	if e.Tip != "" {
		return e.Tip
	}
	return e.Head
}

// record is Record once a status found the worktree dirty, keepIgnored
// asks to look for ignored files to keep, or HEAD holds commits that
// nothing else does (commits counts them).
func record(ctx context.Context, lk *gitx.Locked, what Entry, keepIgnored []string, commits int, now time.Time) (*Entry, error) {
	dir := what.Path
	head, err := lk.WorktreeHead(ctx, dir)
	if err != nil {
		return nil, err
	}
	headTree, err := tree(ctx, lk, dir, nil, "rev-parse", head+"^{tree}")
	if err != nil {
		return nil, err
	}
	// An index with conflicts has no tree: the working tree, below, has
	// the files as they are.
	indexTree, err := tree(ctx, lk, dir, nil, "write-tree")
	if err != nil {
		indexTree = headTree
	}
	workTree, left, err := workingTree(ctx, lk, dir, keepIgnored)
	if err != nil {
		return nil, err
	}
	if workTree == headTree && indexTree == headTree && !left.leftSome() && commits == 0 {
		return nil, nil // an entry is made for what it left out alone: its note names it
	}
	files, err := changedPaths(ctx, lk, headTree, indexTree, workTree)
	if err != nil {
		return nil, err
	}
	e := what
	if e.Tip, err = detachedTip(ctx, lk, what.Branch, head); err != nil {
		return nil, err
	}
	e.Path, e.Head, e.Files, e.Commits, e.At, e.NotKept, e.TooBig = dir, head, files, commits, now.UTC().Truncate(time.Millisecond), left.NotKept, left.TooBig
	e.IgnoredNotKept, e.OverTotal = left.IgnoredNotKept, left.OverTotal
	return keep(ctx, lk, e, indexTree, workTree)
}

// keep writes the entry e (all but its Ref and Commit filled) as the
// commits of the trees index and work on e.Head, and its ref.
func keep(ctx context.Context, lk *gitx.Locked, e Entry, indexTree, workTree string) (*Entry, error) {
	e.Ref = fmt.Sprintf("%s%s/%d", Prefix, e.Identity, e.At.UnixMilli())
	index, err := tree(ctx, lk, lk.CommonDir, committer, "commit-tree", indexTree, "-p", e.Head, "-m", "git-apex trash: index of "+e.Identity)
	if err != nil {
		return nil, err
	}
	if e.Commit, err = tree(ctx, lk, lk.CommonDir, committer, "commit-tree", workTree, "-p", e.Head, "-p", index, "-m", message(e)); err != nil {
		return nil, err
	}
	if err := lk.SetRef(ctx, lk.CommonDir, e.Ref, e.Commit, ""); err != nil {
		return nil, err
	}
	return &e, nil
}

// tree runs a git command that prints one object name, and returns it.
func tree(ctx context.Context, lk *gitx.Locked, dir string, env []string, args ...string) (string, error) {
	out, err := lk.Run(ctx, dir, env, args...)
	return strings.TrimSpace(out), err
}

// workingTree writes the tree of every file in the worktree at dir that
// is not ignored, and of the ignored ones keepIgnored matches (ignored),
// through a copy of its index (copyInto): its own index is left as it
// is. It leaves out what leftOut and ignored find, and returns it.
func workingTree(ctx context.Context, lk *gitx.Locked, dir string, keepIgnored []string) (string, Entry, error) {
	var left Entry
	indexFile, err := tree(ctx, lk, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", left, err
	}
	if left, err = leftOut(ctx, lk, dir, nil); err != nil {
		return "", left, err
	}
	omitted := left.omitted() // not the ignored ones: git add refuses to name an ignored file
	keepPaths, err := ignored(ctx, lk, dir, keepIgnored, &left)
	if err != nil {
		return "", left, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(indexFile), "apex-trash-index-")
	if err != nil {
		return "", left, err
	}
	defer os.Remove(tmp.Name())
	if err := copyInto(tmp, indexFile); err != nil {
		return "", left, err
	}
	env := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := lk.Run(ctx, dir, env, append([]string{"add", "-A"}, excluding(omitted)...)...); err != nil {
		return "", left, err
	}
	if len(keepPaths) > 0 {
		if _, err := lk.Run(ctx, dir, env, append([]string{"add", "-f"}, literal(keepPaths)...)...); err != nil {
			return "", left, err
		}
	}
	t, err := tree(ctx, lk, dir, env, "write-tree")
	return t, left, err
}

// ignored finds the ignored files of the worktree at dir: it returns
// those that a gitignore pattern of keepIgnored matches, for the trash to
// keep (those over MaxFile go to left.TooBig instead), and puts in
// left.IgnoredNotKept the others, as git lists them: a directory ignored
// whole as dir/, when anything in it was not kept. git looks into
// ignored directories only when keepIgnored has patterns.
func ignored(ctx context.Context, lk *gitx.Locked, dir string, keepIgnored []string, left *Entry) ([]string, error) {
	out, err := lk.Run(ctx, dir, nil, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--no-empty-directory")
	if err != nil {
		return nil, err
	}
	all := nonEmpty(strings.Split(out, "\x00"))
	var keepPaths []string
	if len(keepIgnored) > 0 && len(all) > 0 {
		if keepPaths, err = matching(ctx, lk, dir, keepIgnored, all, left); err != nil {
			return nil, err
		}
	}
	taken := map[string]bool{} // kept, or named already (too big, a nested repository)
	for _, p := range append(slices.Clone(keepPaths), left.omitted()...) {
		taken[p] = true
	}
	var partly []string // directories of which something was kept
	for _, p := range all {
		switch {
		case taken[p] || slices.ContainsFunc(left.IgnoredNotKept, func(d string) bool { return strings.HasPrefix(p, d) }):
		case strings.HasSuffix(p, "/") && slices.ContainsFunc(keepPaths, func(k string) bool { return strings.HasPrefix(k, p) }):
			partly = append(partly, p)
		default:
			left.IgnoredNotKept = append(left.IgnoredNotKept, p)
		}
	}
	if len(partly) == 0 {
		return keepPaths, nil
	}
	if out, err = lk.Run(ctx, dir, nil, append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard"}, literal(partly)...)...); err != nil {
		return nil, err
	}
	for _, p := range nonEmpty(strings.Split(out, "\x00")) {
		if i := slices.IndexFunc(partly, func(d string) bool { return strings.HasPrefix(p, d) }); i >= 0 && !taken[p] {
			left.IgnoredNotKept = append(left.IgnoredNotKept, partly[i])
			partly = slices.Delete(partly, i, i+1)
		}
	}
	slices.Sort(left.IgnoredNotKept)
	return keepPaths, nil
}

// literal is the pathspec of exactly paths.
func literal(paths []string) []string {
	spec := []string{"--"}
	for _, p := range paths {
		spec = append(spec, ":(literal)"+p)
	}
	return spec
}

// matching returns the untracked files under the ignored paths that the
// gitignore patterns match, but those over MaxFile or past MaxTotal
// (into left.TooBig and left.OverTotal) and nested repositories (git lists them as dir/: they stay not kept).
func matching(ctx context.Context, lk *gitx.Locked, dir string, patterns, ignoredPaths []string, left *Entry) ([]string, error) {
	list, err := os.CreateTemp("", "apex-keep-ignored-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(list.Name())
	_, err = list.WriteString(strings.Join(patterns, "\n") + "\n")
	if err = errors.Join(err, list.Close()); err != nil {
		return nil, err
	}
	out, err := lk.Run(ctx, dir, nil, append([]string{"ls-files", "-z", "--others", "--ignored", "--exclude-from=" + list.Name()}, literal(ignoredPaths)...)...)
	if err != nil {
		return nil, err
	}
	var keepPaths []string
	for _, p := range nonEmpty(strings.Split(out, "\x00")) {
		info, err := os.Lstat(filepath.Join(dir, p))
		switch {
		case strings.HasSuffix(p, "/") || err != nil:
		case !info.Mode().IsRegular() || left.admit(p, info.Size()):
			keepPaths = append(keepPaths, p)
		}
	}
	return keepPaths, nil
}

// nonEmpty is paths less its empty strings.
func nonEmpty(paths []string) []string {
	return slices.DeleteFunc(paths, func(p string) bool { return p == "" })
}

// leftOut is what the trash does not keep of the working tree at dir,
// where git runs with env added, in an Entry's NotKept, TooBig and
// OverTotal: the untracked nested repositories (as dir/: git would only
// record the commit one has checked out, and fails on one with none; and
// git is not run inside one: a container may have planted it, with a
// config that runs commands), and the files over MaxFile or past
// MaxTotal, untracked or changed, which git is not given to read (a
// changed tracked one keeps its committed content).
func leftOut(ctx context.Context, lk *gitx.Locked, dir string, env []string) (Entry, error) {
	var left Entry
	untracked, err := lk.Run(ctx, dir, env, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return left, err
	}
	changed, err := lk.Run(ctx, dir, env, "diff-files", "-z", "--name-only") // from the index's stat data: nothing is read
	if err != nil {
		return left, err
	}
	for _, p := range strings.Split(untracked+changed, "\x00") {
		if strings.HasSuffix(p, "/") { // git lists a nested repository as a directory
			left.NotKept = append(left.NotKept, p)
		} else if info, err := os.Lstat(filepath.Join(dir, p)); p != "" && err == nil && info.Mode().IsRegular() {
			left.admit(p, info.Size())
		}
	}
	return left, nil
}

// NestedRepos lists the untracked nested repositories (as dir/) of the
// worktree at dir, as leftOut finds them: the trash cannot keep them
// (git records only the commit one has checked out), so what would
// delete one must not count on the trash to bring it back.
func NestedRepos(ctx context.Context, lk *gitx.Locked, dir string) ([]string, error) {
	// No --exclude-standard: a nested repository inside an ignored
	// directory (vendor/lib/ under an ignored vendor/) is one too.
	untracked, err := lk.Run(ctx, dir, nil, "ls-files", "-z", "--others")
	if err != nil {
		return nil, err
	}
	var nested []string
	for _, p := range strings.Split(untracked, "\x00") {
		if strings.HasSuffix(p, "/") { // git lists a nested repository as a directory
			nested = append(nested, p)
		}
	}
	return nested, nil
}

// omitted are the paths of what leftOut found.
func (e Entry) omitted() []string {
	paths := slices.Clone(e.NotKept)
	for _, b := range append(slices.Clone(e.TooBig), e.OverTotal...) {
		paths = append(paths, b.Path)
	}
	return paths
}

// excluding is the pathspec of every file but those under paths.
func excluding(paths []string) []string {
	spec := []string{"--", "."}
	for _, p := range paths {
		spec = append(spec, ":(exclude,literal)"+p)
	}
	return spec
}

// copyInto fills dst, then closes it, with the file src, if it exists,
// and gives it src's modification time. Git trusts an index entry's stat
// data only for a file older than the index (its racy-git rule): a file
// changed, at the same size, in the second the index was written looks
// unchanged by its stat data (git compares whole seconds unless built
// with USE_NSEC), and only the index's time tells git to compare its
// content. A copy made later would hide such an edit.
func copyInto(dst *os.File, src string) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return dst.Close()
	} else if err != nil {
		dst.Close()
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		dst.Close()
		return err
	}
	_, err = io.Copy(dst, in)
	if err = errors.Join(err, dst.Close()); err != nil {
		return err
	}
	return os.Chtimes(dst.Name(), time.Time{}, info.ModTime())
}

// changedPaths counts the paths that the index or the working tree
// changed from the head's tree.
func changedPaths(ctx context.Context, lk *gitx.Locked, head string, trees ...string) (int, error) {
	paths := map[string]bool{}
	for _, t := range trees {
		out, err := lk.Run(ctx, lk.CommonDir, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", head, t)
		if err != nil {
			return 0, err
		}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				paths[p] = true
			}
		}
	}
	return len(paths), nil
}

// message is an entry's commit message.
func message(e Entry) string {
	return fmt.Sprintf("git-apex trash: %s\n\nUncommitted work of %s at %s, kept when it was discarded.\n\n%s: %s\n%s: %s\n%s: %s\n%s: %s\n%s: %s\n%s: %d\n%s: %d\n%s: %s\n",
		e.Identity, e.Identity, e.Path, keyIdentity, e.Identity, keyBranch, e.Branch, keyBase, e.Base, keyMode, e.Mode, keyPath, e.Path, keyFiles, e.Files, keyCommits, e.Commits, keyTip, e.Tip)
}

// List is the entries of identity ("": of every identity), newest first.
func List(ctx context.Context, lk *gitx.Locked, identity string) ([]Entry, error) {
	pattern := strings.TrimSuffix(Prefix, "/")
	if identity != "" {
		pattern = Prefix + identity
	}
	out, err := lk.Run(ctx, lk.CommonDir, nil, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(parent)%00%(contents)%01", pattern)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for _, rec := range strings.Split(out, "\x01\n") {
		if e, ok := parse(rec); ok && (identity == "" || e.Identity == identity) {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b Entry) int { return b.At.Compare(a.At) })
	return entries, nil
}

// parse reads one record of List's for-each-ref.
func parse(rec string) (Entry, bool) {
	fields := strings.SplitN(rec, "\x00", 4)
	if len(fields) != 4 {
		return Entry{}, false
	}
	e := Entry{Ref: fields[0], Commit: fields[1]}
	e.Head, _, _ = strings.Cut(fields[2], " ")
	rest, ok := strings.CutPrefix(e.Ref, Prefix)
	slash := strings.LastIndexByte(rest, '/')
	if !ok || slash < 0 {
		return Entry{}, false
	}
	ms, err := strconv.ParseInt(rest[slash+1:], 10, 64)
	if err != nil {
		return Entry{}, false
	}
	e.At = time.UnixMilli(ms).UTC()
	sc := bufio.NewScanner(strings.NewReader(fields[3]))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ": ")
		switch key {
		case keyIdentity:
			e.Identity = value
		case keyBranch:
			e.Branch = value
		case keyBase:
			e.Base = value
		case keyMode:
			e.Mode = value
		case keyPath:
			e.Path = value
		case keyFiles:
			e.Files, _ = strconv.Atoi(value)
		case keyCommits:
			e.Commits, _ = strconv.Atoi(value)
		case keyTip:
			e.Tip = value
		}
	}
	return e, e.Identity == rest[:slash]
}

// Put writes an entry's files into the worktree at dir, and its index:
// every file as it was (deleted ones deleted), staged state included.
// Files the worktree has that the entry does not track stay.
func Put(ctx context.Context, lk *gitx.Locked, dir string, e Entry) error {
	if _, err := lk.Run(ctx, dir, nil, "read-tree", "--reset", "-u", e.Commit); err != nil {
		return err
	}
	_, err := lk.Run(ctx, dir, nil, "read-tree", e.Commit+"^2")
	return err
}

// Drop deletes an entry: its objects go at git's next gc.
func Drop(ctx context.Context, lk *gitx.Locked, e Entry) error {
	return lk.DeleteRef(ctx, e.Ref)
}

// Expire drops the entries made before cutoff, and returns them.
func Expire(ctx context.Context, lk *gitx.Locked, cutoff time.Time) ([]Entry, error) {
	entries, err := List(ctx, lk, "")
	if err != nil {
		return nil, err
	}
	var dropped []Entry
	for _, e := range entries {
		if e.At.Before(cutoff) {
			if err := Drop(ctx, lk, e); err != nil {
				return dropped, err
			}
			dropped = append(dropped, e)
		}
	}
	return dropped, nil
}

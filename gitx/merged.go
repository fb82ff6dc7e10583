package gitx

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Merge reasons: why a branch's work counts as being in its base.
const (
	MergedAncestor = "its tip is in the base"
	MergedSameTree = "its tree equals the base's"
	MergedSquash   = "squash-merged: merging it changes nothing"
	MergedPatch    = "squash-merged: its whole change is a commit in the base"
	MergedRebase   = "rebase-merged: every commit has an equivalent in the base"
)

// MergeCheck is one branch to check against a base.
type MergeCheck struct {
	Tip   string // the branch's tip commit
	Start string // the commit its env started from
	Base  string // the base ref, as resolved by BaseRef
}

// Merged says whether a branch's work is in its base, and why, trying
// the cheapest check first. ancestor is the caller's answer to the first
// check (from one MergedInto for many branches). A branch with no commits
// since its start is never merged; a conflicting merge is not merged, not
// an error. It returns "" when the work is not in the base.
func (r *Repo) Merged(ctx context.Context, c MergeCheck, ancestor bool) (string, error) {
	if c.Tip == c.Start {
		return "", nil
	}
	own, err := r.readIn(ctx, r.CommonDir, "rev-list", "--count", c.Start+".."+c.Tip)
	if err != nil || strings.TrimSpace(own) == "0" {
		return "", err
	}
	if ancestor {
		return MergedAncestor, nil
	}
	trees, err := r.readIn(ctx, r.CommonDir, "rev-parse", c.Tip+"^{tree}", c.Base+"^{tree}")
	if err != nil {
		return "", err
	}
	t := strings.Fields(trees)
	if len(t) == 2 && t[0] == t[1] {
		return MergedSameTree, nil
	}
	baseTree := t[1]
	out, err := r.readIn(ctx, r.CommonDir, "merge-tree", "--write-tree", "--no-messages", c.Base, c.Tip)
	var gerr *Error
	switch {
	case err == nil && strings.TrimSpace(firstLine(out)) == baseTree:
		return MergedSquash, nil
	case err != nil && !(errors.As(err, &gerr) && gerr.Status == 1): // 1: conflicts
		return "", err
	}
	if ok, err := r.changeInBase(ctx, c); ok || err != nil {
		return MergedPatch, err
	}
	cherry, err := r.readIn(ctx, r.CommonDir, "cherry", c.Base, c.Tip)
	if err != nil {
		return "", err
	}
	lines := strings.Fields(cherry)
	if len(lines) == 0 {
		return "", nil
	}
	for i := 0; i < len(lines); i += 2 {
		if lines[i] != "-" {
			return "", nil
		}
	}
	return MergedRebase, nil
}

// changeInBase reports whether the branch's whole change, as one patch on
// the merge base, has the patch-id of a commit made in the base since
// the fork: a squash merge, even when the base later rewrote those lines.
func (r *Repo) changeInBase(ctx context.Context, c MergeCheck) (bool, error) {
	mb, err := r.readIn(ctx, r.CommonDir, "merge-base", c.Base, c.Tip)
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && gerr.Status == 1 {
			return false, nil // no common history
		}
		return false, err
	}
	mb = strings.TrimSpace(mb)
	diff, err := r.readIn(ctx, r.CommonDir, "diff", "--no-ext-diff", "--no-textconv", mb, c.Tip)
	if err != nil || diff == "" {
		return false, err
	}
	want, err := r.patchIDs(ctx, diff)
	if err != nil || len(want) != 1 {
		return false, err
	}
	log, err := r.readIn(ctx, r.CommonDir, "log", "-p", "--no-merges", "--no-ext-diff", "--no-textconv", "--format=commit %H", mb+".."+c.Base)
	if err != nil || log == "" {
		return false, err
	}
	have, err := r.patchIDs(ctx, log)
	if err != nil {
		return false, err
	}
	for _, id := range have {
		if id == want[0] {
			return true, nil
		}
	}
	return false, nil
}

// patchIDs runs `git patch-id --stable` over patches and returns the ids.
func (r *Repo) patchIDs(ctx context.Context, patches string) ([]string, error) {
	out, err := run(ctx, command{dir: r.CommonDir, args: []string{"patch-id", "--stable"}, readOnly: true, stdin: strings.NewReader(patches)})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if id, _, ok := strings.Cut(line, " "); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// BaseRef returns the ref to check a base branch against: the local
// branch, or its upstream when that is strictly ahead of it.
func (r *Repo) BaseRef(ctx context.Context, base string) (string, error) {
	out, err := r.readIn(ctx, r.CommonDir, "for-each-ref", "--format=%(upstream)%00%(upstream:trackshort)", "refs/heads/"+base)
	if err != nil {
		return "", err
	}
	// trackshort is "<" when the branch is behind its upstream.
	if upstream, track, _ := strings.Cut(strings.TrimSpace(firstLine(out)), "\x00"); track == "<" {
		return upstream, nil
	}
	return base, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Branch is a local branch's tip and when it was last committed to.
type Branch struct {
	Tip       string
	Committed time.Time
}

// Branches returns every local branch, in one git call. Committed is
// read only withDates: it costs reading every tip commit.
func (r *Repo) Branches(ctx context.Context, withDates bool) (map[string]Branch, error) {
	format := "--format=%(refname:short)%00%(objectname)%00"
	if withDates {
		format += "%(committerdate:unix)"
	}
	out, err := r.readIn(ctx, r.CommonDir, "for-each-ref", format, "refs/heads/")
	if err != nil {
		return nil, err
	}
	branches := make(map[string]Branch)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) == 3 {
			unix, _ := strconv.ParseInt(f[2], 10, 64)
			branches[f[0]] = Branch{Tip: f[1], Committed: time.Unix(unix, 0)}
		}
	}
	return branches, nil
}

// TouchedPaths returns, for each (from, to) pair of commits, the paths
// that differ between them, in one git call. Paths are as git prints
// them (quoted when unusual), so they compare with ChangedPaths'.
func (r *Repo) TouchedPaths(ctx context.Context, pairs [][2]string) ([][]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, p := range pairs {
		in.WriteString(p[0] + " " + p[1] + "\n")
	}
	// --always prints a header for every pair, even one with no change; a
	// header starting with NUL cannot be mistaken for a path.
	out, err := run(ctx, command{dir: r.CommonDir, readOnly: true, stdin: strings.NewReader(in.String()),
		args: []string{"diff-tree", "--stdin", "--always", "-r", "--name-only", "--format=%x00pair"}})
	if err != nil {
		return nil, err
	}
	touched := make([][]string, 0, len(pairs))
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "\x00pair":
			touched = append(touched, nil)
		case line != "" && len(touched) > 0:
			touched[len(touched)-1] = append(touched[len(touched)-1], line)
		}
	}
	if len(touched) != len(pairs) {
		return nil, errors.New("cannot read git diff-tree --stdin output: it does not match its input")
	}
	return touched, nil
}

// ChangedPaths returns the paths that differ between two commits, or,
// when to is "", between from and the tracked files of the tree at dir.
func (r *Repo) ChangedPaths(ctx context.Context, dir, from, to string) ([]string, error) {
	args := []string{"diff", "--name-only", "--no-renames", "--no-ext-diff", from}
	if to != "" {
		args, dir = append(args, to), r.CommonDir
	}
	out, err := r.readIn(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		if line != "" {
			paths = append(paths, line)
		}
	}
	return paths, nil
}

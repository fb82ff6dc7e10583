package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/intent"
	"github.com/git-apex/git-apex/words"
)

// undoSharedSwitch puts the main checkout back where a shared start that
// was cut short found it: on its branch (or detached) at its commit,
// with the index and the files the switch could have written, those that
// differ between the two commits, as that commit has them. A shared
// start writes its intent only once the checkout has no change to a
// tracked file, so every such change was the switch's; untracked files
// were the user's, and stay. A path that holds neither commit's content
// nor the start of the new one's (where git was killed writing it)
// (edited since) or a checkout moved on (a commit, another branch)
// stops it, with an error: the intent stays, and nothing is changed.
func (d *Doctor) undoSharedSwitch(ctx context.Context, lk *gitx.Locked, in *intent.Intent) (done string, ok bool, err error) {
	dir := in.Path
	git := func(args ...string) (string, error) { return lk.Run(ctx, dir, nil, args...) }
	head, err := git("rev-parse", "--verify", "-q", "HEAD")
	if err != nil {
		return "", false, fmt.Errorf("cannot read the main checkout's HEAD: %w", err)
	}
	head = strings.TrimSpace(head)
	branch, _ := git("symbolic-ref", "-q", "--short", "HEAD") // fails when detached
	branch = strings.TrimSpace(branch)
	switch {
	case branch == in.FromBranch && head == in.FromHead: // cut short before HEAD moved
	case branch == in.Branch && head == in.Target: // switched, not recorded
	default:
		return "", false, fmt.Errorf("the main checkout %s is on %s at %s, neither where the start found it (%s at %s) nor where it went (%s at %s); left as it is",
			dir, orDetached(branch), head, orDetached(in.FromBranch), in.FromHead, orDetached(in.Branch), in.Target)
	}
	// The paths the switch could have touched, with A (only in Target),
	// D (only in FromHead) or M.
	out, err := git("diff-tree", "-r", "-z", "--no-renames", "--name-status", in.FromHead, in.Target)
	if err != nil {
		return "", false, err
	}
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	status := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		status[fields[i+1]] = fields[i]
	}
	differs := map[string]map[string]bool{}
	for _, commit := range []string{in.FromHead, in.Target} {
		if differs[commit], err = d.differsFrom(ctx, lk, dir, commit); err != nil {
			return "", false, err
		}
	}
	var neither, back, drop []string
	for path, st := range status {
		if _, err := os.Lstat(filepath.Join(dir, path)); errors.Is(err, fs.ErrNotExist) {
			if st != "A" {
				back = append(back, path)
			}
			continue
		}
		asBefore := st != "A" && !differs[in.FromHead][path]
		asSwitched := st != "D" && (!differs[in.Target][path] || d.partlyWritten(ctx, lk, dir, in.Target, path))
		switch {
		case !asBefore && !asSwitched:
			neither = append(neither, path)
		case st == "A":
			drop = append(drop, path)
		case !asBefore:
			back = append(back, path)
		}
	}
	if len(neither) > 0 {
		return "", false, fmt.Errorf("%s in the main checkout %s holds what neither %s nor %s has (changed since?); left as it is: look at it, commit or move it away, then run `git apex doctor --fix` again",
			strings.Join(neither, ", "), dir, in.FromHead, in.Target)
	}
	// HEAD, then the index, then the files.
	if in.FromBranch != "" {
		_, err = git("symbolic-ref", "HEAD", "refs/heads/"+in.FromBranch)
	} else {
		_, err = git("update-ref", "--no-deref", "HEAD", in.FromHead)
	}
	if err != nil {
		return "", false, err
	}
	if _, err := git("read-tree", "--reset", in.FromHead); err != nil {
		return "", false, err
	}
	for len(back) > 0 {
		n := min(len(back), 500)
		if _, err := git(append([]string{"checkout-index", "-f", "-u", "--"}, back[:n]...)...); err != nil {
			return "", false, err
		}
		back = back[n:]
	}
	for _, path := range drop {
		if err := os.Remove(filepath.Join(dir, path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", false, err
		}
	}
	git("update-index", "-q", "--refresh") // stat information only; it exits 1 while anything differs
	dropped, err := dropNewBranch(ctx, lk, in)
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("undid it: put the main checkout back on %s at %s (%s of the switch undone, untracked files untouched)%s",
		orDetached(in.FromBranch), in.FromHead[:min(7, len(in.FromHead))], words.Count(len(status), "path"), dropped), true, nil
}

// partlyWritten reports whether the file at path in dir is a regular
// file holding the start of commit's (git was killed writing it).
func (d *Doctor) partlyWritten(ctx context.Context, lk *gitx.Locked, dir, commit, path string) bool {
	if info, err := os.Lstat(filepath.Join(dir, path)); err != nil || !info.Mode().IsRegular() {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		return false
	}
	blob, err := lk.Run(ctx, dir, nil, "cat-file", "blob", commit+":"+path)
	return err == nil && strings.HasPrefix(blob, string(data))
}

// differsFrom lists the paths of commit whose file in the working tree
// at dir differs from it, or is missing, read through an index of its
// own (the checkout's may be either commit's).
func (d *Doctor) differsFrom(ctx context.Context, lk *gitx.Locked, dir, commit string) (map[string]bool, error) {
	index := filepath.Join(d.r.Git.ApexDir(), "shared-undo.index")
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := lk.Run(ctx, dir, env, "read-tree", commit); err != nil {
		return nil, err
	}
	lk.Run(ctx, dir, env, "update-index", "-q", "--refresh") // hashes what stat cannot tell; exits 1 while anything differs
	out, err := lk.Run(ctx, dir, env, "diff-files", "--name-only", "-z")
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths[p] = true
		}
	}
	return paths, nil
}

// orDetached is a branch's name, or "(detached)" for none.
func orDetached(branch string) string {
	if branch == "" {
		return "(detached)"
	}
	return branch
}

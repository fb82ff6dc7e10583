package trash

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-apex/git-apex/gitx"
)

// Overwrites lists the files of the worktree at dir that Put(e) would
// overwrite or delete, and that are neither as the commit e.Head has
// them nor as the entry has them: changes made there after a Put into
// it was cut short, which a second Put would lose. A file the worktree
// lacks is never listed (Put only writes it), nor one that neither the
// entry, e.Head nor the index tracks (Put leaves it alone), nor one
// that holds the start of the entry's version (cutShort): git creates
// each file, then writes it, and a Put killed in between leaves it so;
// the entry's version holds all it has. The index's own staged state
// is not compared: Put sets it as the entry has it.
func Overwrites(ctx context.Context, lk *gitx.Locked, dir string, e Entry) ([]string, error) {
	work, _, err := workingTree(ctx, lk, dir, nil)
	if err != nil {
		return nil, err
	}
	fromEntry, err := differing(ctx, lk, work, e.Commit)
	if err != nil {
		return nil, err
	}
	fromHead, err := differing(ctx, lk, work, e.Head)
	if err != nil {
		return nil, err
	}
	out, err := lk.Run(ctx, dir, nil, "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	indexed := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		indexed[p] = true
	}
	var lost []string
	for p, vsEntry := range fromEntry {
		vsHead, differs := fromHead[p]
		switch {
		case vsEntry == "A" || !differs: // not in the worktree, or as e.Head has it
		case vsEntry == "D" && vsHead == "D" && !indexed[p]: // tracked by none: left alone
		case vsEntry == "M": // a file both have: lost unless it is the entry's cut short
			short, err := cutShort(ctx, lk, dir, e, p)
			if err != nil {
				return nil, err
			}
			if !short {
				lost = append(lost, p)
			}
		default:
			lost = append(lost, p)
		}
	}
	slices.Sort(lost)
	return lost, nil
}

// cutShort reports whether the file path, which the worktree at dir and
// the entry e both have, is in the worktree a regular file whose content
// is the start of the entry's version as git writes it there (its
// filters applied): Put writing that version over it loses nothing.
func cutShort(ctx context.Context, lk *gitx.Locked, dir string, e Entry, path string) (bool, error) {
	info, err := os.Lstat(filepath.Join(dir, path))
	if err != nil || !info.Mode().IsRegular() || info.Size() > MaxFile {
		return false, nil
	}
	have, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		return false, nil
	}
	want, err := lk.Run(ctx, dir, nil, "cat-file", "--filters", e.Commit+":"+path)
	if err != nil {
		return false, err
	}
	return strings.HasPrefix(want, string(have)), nil
}

// differing maps each path whose file differs between the trees of
// commits (or trees) from and to to git's status letter for it: A (only
// to has it), D (only from has it), M or T.
func differing(ctx context.Context, lk *gitx.Locked, from, to string) (map[string]string, error) {
	out, err := lk.Run(ctx, lk.CommonDir, nil, "diff-tree", "-r", "-z", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	paths := map[string]string{}
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(fields[i])
		if len(meta) == 5 {
			paths[fields[i+1]] = meta[4][:1]
		}
	}
	return paths, nil
}

// DropBranch deletes branch, which a restore made at head to put an
// entry back on, when it is still at head and no worktree has it checked
// out; it says whether it did.
func DropBranch(ctx context.Context, lk *gitx.Locked, branch, head string) (bool, error) {
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return false, err
	}
	for _, wt := range worktrees {
		if wt.Branch == branch && !wt.Bare {
			return false, nil
		}
	}
	refs, err := lk.Refs(ctx, "refs/heads/"+branch)
	if err != nil || refs["refs/heads/"+branch].Hash != head {
		return false, err
	}
	return true, lk.DeleteBranchAt(ctx, branch, head)
}

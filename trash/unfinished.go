package trash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
)

// RecordUnfinished keeps what the directory what.Path holds that is not
// from the commit what.Head: every file that is not ignored and is not
// in its tree, or differs from it, laid over that tree. It is for a
// worktree whose making was cut short (a killed `git worktree add` or
// start): its registration, HEAD and index may be half written or gone,
// so git reads none of them, running on the common dir with an index of
// its own; files the checkout had not written yet are not taken as
// deleted, nor are the empty files where the commit has content (git
// creates each file, then writes it). It returns nil when every file there is the commit's own (or
// missing). what gives Identity, Branch, Base and Mode too.
func RecordUnfinished(ctx context.Context, lk *gitx.Locked, what Entry, now time.Time) (*Entry, error) {
	env, done, err := unfinishedIndex(ctx, lk, what)
	if err != nil {
		return nil, err
	}
	defer done()
	headTree, err := tree(ctx, lk, what.Path, env, "write-tree")
	if err != nil {
		return nil, err
	}
	left, err := leftOut(ctx, lk, what.Path, env)
	if err != nil {
		return nil, err
	}
	begun, err := begun(ctx, lk, what.Path, what.Head)
	if err != nil {
		return nil, err
	}
	// --ignore-removal: a file the checkout had not written is no change.
	if _, err := lk.Run(ctx, what.Path, env, append([]string{"add", "--ignore-removal"}, excluding(append(left.omitted(), begun...))...)...); err != nil {
		return nil, err
	}
	workTree, err := tree(ctx, lk, what.Path, env, "write-tree")
	if err != nil || workTree == headTree && !left.leftSome() { // what it left out alone makes an entry too, named
		return nil, err
	}
	e := what
	if e.Files, err = changedPaths(ctx, lk, headTree, workTree); err != nil {
		return nil, err
	}
	e.At, e.NotKept, e.TooBig, e.OverTotal = now.UTC().Truncate(time.Millisecond), left.NotKept, left.TooBig, left.OverTotal
	return keep(ctx, lk, e, headTree, workTree)
}

// UnkeptUnfinished lists what RecordUnfinished would leave out of the
// directory what.Path, and a removal of it then delete unkept: its
// untracked nested repositories (as dir/), and the files over MaxFile or
// past MaxTotal. None: the trash keeps all of it but ignored files.
func UnkeptUnfinished(ctx context.Context, lk *gitx.Locked, what Entry) ([]string, error) {
	env, done, err := unfinishedIndex(ctx, lk, what)
	if err != nil {
		return nil, err
	}
	defer done()
	left, err := leftOut(ctx, lk, what.Path, env)
	return left.omitted(), err
}

// unfinishedIndex is the environment git runs in to read the directory
// what.Path for RecordUnfinished: the common dir, with an index of its
// own read from what.Head; done removes that index.
func unfinishedIndex(ctx context.Context, lk *gitx.Locked, what Entry) (env []string, done func(), err error) {
	tmp, err := os.CreateTemp(lk.CommonDir, "apex-trash-index-")
	if err != nil {
		return nil, nil, err
	}
	tmp.Close()
	done = func() { os.Remove(tmp.Name()) }
	env = []string{"GIT_DIR=" + lk.CommonDir, "GIT_WORK_TREE=" + what.Path, "GIT_INDEX_FILE=" + tmp.Name()}
	if _, err := lk.Run(ctx, what.Path, env, "read-tree", what.Head); err != nil {
		done()
		return nil, nil, err
	}
	return env, done, nil
}

// begun lists the files in dir that are empty where the commit head has
// content: files a killed checkout had created but not written.
func begun(ctx context.Context, lk *gitx.Locked, dir, head string) ([]string, error) {
	out, err := lk.Run(ctx, lk.CommonDir, nil, "ls-tree", "-r", "-z", "-l", head)
	if err != nil {
		return nil, err
	}
	var empty []string
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 4 || fields[1] != "blob" || fields[3] == "0" {
			continue
		}
		if info, err := os.Lstat(filepath.Join(dir, path)); err == nil && info.Mode().IsRegular() && info.Size() == 0 {
			empty = append(empty, path)
		}
	}
	return empty, nil
}

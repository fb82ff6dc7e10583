package copymode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/gitx"
)

// handOverScript runs inside a copied container: it adds the objects of
// the pack on its stdin (and, when $5 is set, makes that commit shallow:
// its history was not sent). Then, when ref $1 is still at $3 and the
// worktree still what the last exchange took (tree $4), it moves the
// ref, and the index and the files when the ref is checked out, from $3
// to $2, as a fast-forward would (the index's stat data refreshed first:
// the files were copied in after it was written; an untracked file that
// the commits add, holding exactly what they do, set aside first so that
// it does not stand in the way), and prints the worktree's new state as
// a tree. It exits 3 when the container moved on since (nothing moved),
// and 4 when its uncommitted changes stand in the way (nothing moved,
// the files set aside put back).
const handOverScript = snapshotFunc + `git unpack-objects -q || exit 1
if [ -n "$5" ]; then echo "$5" >> "$GIT_DIR/shallow" || exit 1; fi
cur=$(git rev-parse -q --verify "$1") || cur=
[ "$cur" = "$3" ] || exit 3
[ "$(snapshot)" = "$(git rev-parse -q --verify "$4^{tree}")" ] || exit 3
if [ "$1" = HEAD ] || [ "$(git symbolic-ref -q HEAD)" = "$1" ]; then
	git update-index -q --refresh >/dev/null 2>&1
	aside="$GIT_DIR/apex-aside"; rm -rf "$aside"; mkdir "$aside" || exit 1; : >"$aside/moved"
	git -c core.quotePath=false diff --name-only --no-renames --diff-filter=A "$3" "$2" >"$aside/list" 2>/dev/null
	n=0
	while IFS= read -r p; do
		[ -f "$p" ] && [ ! -L "$p" ] && [ -z "$(GIT_LITERAL_PATHSPECS=1 git ls-files -- "$p")" ] || continue
		if [ -x "$p" ]; then m=100755; else m=100644; fi
		[ "$(GIT_LITERAL_PATHSPECS=1 git -c core.quotePath=false ls-tree "$2" -- "$p")" = "$m blob $(git hash-object -- "$p")	$p" ] || continue
		n=$((n+1)); mv -- "$p" "$aside/$n" && echo "$p" >>"$aside/moved" || exit 1
	done <"$aside/list"
	if ! git read-tree -m -u "$3" "$2" >&2; then
		n=0; while IFS= read -r p; do n=$((n+1)); mv -- "$aside/$n" "$p"; done <"$aside/moved"
		rm -rf "$aside"; exit 4
	fi
	rm -rf "$aside"
fi
git update-ref --no-deref "$1" "$2" "$3" || exit 1
snapshot`

// HandOver is what a copied container is given of commits made on the
// host: its ref to move from one commit (the tip it has) to another (the
// host's tip).
type HandOver struct {
	Ref, From, To string
}

// HandOver gives a copied container the host's commits (see HandOver):
// the objects it lacks as a pack (when To does not descend from From,
// the host rewrote the branch: To alone with all its tree, made shallow
// inside), then its ref, and its index and files when the ref is checked
// out, moved as a fast-forward would. It records what both sides now
// hold (see Settle). It reports false, changing nothing but adding
// objects, when the container moved on since the last exchange: its work
// comes back first.
func (w Worktree) HandOver(ctx context.Context, rt container.Runtime, ctr string, git *gitx.Repo, h HandOver) (bool, error) {
	ahead, err := git.IsAncestor(ctx, h.From, h.To)
	if err != nil {
		return false, err
	}
	since, shallow := h.From, ""
	if !ahead {
		since, shallow = "", h.To
	}
	dir := filepath.Join(w.StateDir, "outgoing")
	if err := os.RemoveAll(dir); err != nil {
		return false, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	if err := git.PackCommit(ctx, h.To, since, dir); err != nil {
		return false, err
	}
	packs, _ := filepath.Glob(filepath.Join(dir, "*.pack"))
	if len(packs) != 1 {
		return false, fmt.Errorf("git wrote %d packs, not one", len(packs))
	}
	settled, err := w.settled(ctx, git, h.From, h.To)
	if err != nil {
		return false, err
	}
	m, err := w.loadManifest()
	if err != nil {
		return false, err
	}
	pack, err := os.Open(packs[0])
	if err != nil {
		return false, err
	}
	defer pack.Close()
	var out, stderr bytes.Buffer
	code, err := rt.Exec(ctx, ctr, container.ExecSpec{Cmd: []string{"sh", "-c", handOverScript, "handover", h.Ref, h.To, h.From, m.Tree, shallow},
		WorkDir: w.Dir, Env: w.GitEnv, Stdin: pack, Stdout: &limitedBuffer{buf: &out, left: 1024}, Stderr: &stderr})
	switch {
	case err != nil:
		return false, err
	case code == 3:
		return false, nil
	case code == 4:
		return false, fmt.Errorf("its uncommitted changes stand in the way: %s", strings.TrimSpace(stderr.String()))
	case code != 0:
		return false, fmt.Errorf("exit status %d: %s", code, strings.TrimSpace(stderr.String()))
	}
	tree := strings.TrimSpace(out.String())
	if !gitx.IsObjectID(tree) {
		return false, fmt.Errorf("it answered %q, not a tree", truncate(tree))
	}
	m.Tree = tree
	if err := m.settle(w.Dir, settled); err != nil {
		return false, err
	}
	return true, w.saveManifest(m)
}

// Settle records the host's files that commits from..to changed, and
// that hold what to does, as what the container holds too (to is on both
// sides now): its next change of them is none of the host's, where
// another file the host changed since the last exchange is.
func (w Worktree) Settle(ctx context.Context, git *gitx.Repo, from, to string) error {
	paths, err := w.settled(ctx, git, from, to)
	if err != nil || len(paths) == 0 {
		return err
	}
	m, err := w.loadManifest()
	if err != nil {
		return err
	}
	if err := m.settle(w.Dir, paths); err != nil {
		return err
	}
	return w.saveManifest(m)
}

// settle records the stat data of the files at paths in the worktree at
// dir (forgets those that are not there).
func (m manifest) settle(dir string, paths []string) error {
	for _, p := range paths {
		info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case err == nil:
			m.Files[p] = statOf(info)
		case os.IsNotExist(err):
			delete(m.Files, p)
		default:
			return err
		}
	}
	return nil
}

// Conflicting lists the paths that commits from..to changed whose file
// the user changed on the host since the last exchange, and otherwise
// than to has it: the commits would undo the user's change there.
func (w Worktree) Conflicting(ctx context.Context, git *gitx.Repo, from, to string) ([]string, error) {
	_, differ, err := w.compare(ctx, git, from, to)
	if err != nil || len(differ) == 0 {
		return nil, err
	}
	m, err := w.loadManifest()
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, p := range differ {
		info, statErr := os.Lstat(filepath.Join(w.Dir, filepath.FromSlash(p)))
		before, known := m.Files[p]
		untouched := (os.IsNotExist(statErr) && !known) || (statErr == nil && known && statOf(info) == before)
		if !untouched {
			changed = append(changed, p)
		}
	}
	return changed, nil
}

// settled lists the paths that commits from..to changed whose file in
// the host's worktree holds what to does.
func (w Worktree) settled(ctx context.Context, git *gitx.Repo, from, to string) ([]string, error) {
	same, _, err := w.compare(ctx, git, from, to)
	return same, err
}

// compare splits the paths that commits from..to changed into those
// whose file in the host's worktree holds what to does, and the others.
func (w Worktree) compare(ctx context.Context, git *gitx.Repo, from, to string) (same, differ []string, err error) {
	changed, err := git.ChangedPaths(ctx, "", from, to)
	if err != nil || len(changed) == 0 {
		return nil, nil, err
	}
	dirty, err := git.ChangedPaths(ctx, w.Dir, to, "")
	if err != nil {
		return nil, nil, err
	}
	other := map[string]bool{}
	for _, p := range dirty {
		other[p] = true
	}
	for _, p := range changed {
		if other[p] {
			differ = append(differ, p)
		} else {
			same = append(same, p)
		}
	}
	return same, differ, nil
}

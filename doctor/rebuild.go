package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sweep"
)

// RebuildState is `doctor --fix` for a damaged state database (see
// state.DamagedError): it moves the database aside, keeping it for
// whoever wants to look, and makes a new one with what git still knows:
// the worktrees under the environment root whose directory names are
// identities become worktree environments again, and the clean worktrees
// under the pool's directory idle slots. Links, the event log and the
// containers of full environments cannot be read back from git; the
// findings say so, and name the worktrees it could not adopt.
func RebuildState(ctx context.Context, dir string, opts repo.Options) ([]Finding, error) {
	git, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	db := repo.StatePath(git)
	aside := db + ".damaged-" + time.Now().UTC().Format("20060102-150405")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Rename(db+suffix, aside+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cannot move the damaged state database aside: %w", err)
		}
	}
	r, err := repo.OpenState(ctx, git, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	pol, err := r.Policy()
	if err != nil {
		pol = policy.Default()
	}
	lk, err := r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	worktrees, err := lk.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	var rebuilt []string
	var out []Finding
	root := pol.EnvRoot(r.Git.MainRoot(), r.Git.Name)
	for _, wt := range worktrees[1:] {
		switch {
		case wt.Prunable:
		case hostpath.Within(wt.Path, pool.New(r).Dir()):
			// A slot is reset when leased: one with changes (a failed batch
			// task kept with --keep-failed) is not made a slot again.
			if changes, err := lk.Status(ctx, wt.Path, gitx.StatusOptions{Contained: true}); err != nil || changes.Dirty() {
				out = append(out, Finding{Check: "worktree " + wt.Path, Status: "problem",
					Detail: "not rebuilt as a pool slot: it has changes (a failed batch task kept with --keep-failed?); look inside, then `git worktree remove` it"})
				continue
			}
			if _, err := r.Store.Pool().Add(ctx, wt.Path, wt.Head, 0, 0); err != nil {
				return nil, err
			}
			rebuilt = append(rebuilt, "pool slot "+filepath.Base(wt.Path))
		case hostpath.Within(wt.Path, root):
			item := sweep.New(r).Adopt(ctx, wt, worktrees[0].Branch, sweep.GCOptions{Force: true})
			if item.Action == "adopted" {
				rebuilt = append(rebuilt, item.Identity)
			} else {
				out = append(out, Finding{Check: "worktree " + wt.Path, Status: "problem", Detail: "not rebuilt: " + item.Reason})
			}
		}
	}
	detail := fmt.Sprintf("the damaged database is kept as %s; rebuilt from git: %s. Not rebuilt (git does not hold them): links, the event log, and full environments' containers (`git apex gc --orphans` lists them)",
		aside, pick(len(rebuilt) == 0, "nothing", strings.Join(rebuilt, ", ")))
	return append([]Finding{{Check: "state", Status: "fixed", Detail: detail}}, out...), nil
}

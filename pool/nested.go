package pool

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
)

// A nested repository made by hand in an idle slot (`git init dep`, with
// commits of its own) is what the trash cannot keep (trash.NestedRepos).
// So the pool never deletes one without being told twice, as `git apex
// remove` does not: `pool drain` refuses such a slot unless --force, and
// an acquire or take that finds one takes the slot out of the pool and
// leaves it where it is, as a preserved env (setAside).

// nestedIn lists the untracked nested repositories of the idle slot s;
// none for a slot a warm container was made for (it holds nothing of the
// user's) or one whose directory is gone.
func nestedIn(ctx context.Context, lk *gitx.Locked, s *state.Slot, warm bool) ([]string, error) {
	if warm || !hostpath.Exists(s.Path) {
		return nil, nil
	}
	return trash.NestedRepos(ctx, lk, s.Path)
}

// nestedWords names nested repositories as `git apex remove` names them:
// `the nested repository "dep/"`.
func nestedWords(nested []string) string {
	q := make([]string, len(nested))
	for i, p := range nested {
		q[i] = strconv.Quote(p)
	}
	if len(q) == 1 {
		return "the nested repository " + q[0]
	}
	return "the nested repositories " + strings.Join(q, ", ")
}

// setAsideIdentity is the env a slot set aside becomes: task-<slot>, the
// identity the trash keeps a slot's changes as.
func setAsideIdentity(s *state.Slot) policy.Identity {
	return policy.Identity{Workflow: "task", Name: filepath.Base(s.Path)}
}

// setAside takes the slot s, leased by this process, out of the pool as
// it is, where it is, because it holds nested (its nested repositories):
// it becomes a preserved env, which `git apex remove` refuses to delete
// with them unless `--force --force`. A warning names the slot, what it
// holds and the env. Nothing in it is reset or deleted.
func (p *Pool) setAside(ctx context.Context, s *state.Slot, nested []string) error {
	reason := "pool slot set aside: it holds " + nestedWords(nested) + ", which the trash cannot keep"
	env, err := p.keepSlot(ctx, s, setAsideIdentity(s), reason, nil)
	if err != nil {
		return fmt.Errorf("pool slot %s holds %s, which the trash cannot keep, and cannot be set aside: %w", s.Path, nestedWords(nested), err)
	}
	p.r.Warnf("pool slot %s is taken out of the pool, not cleaned: it holds %s, which the trash cannot keep (`git apex restore` could not bring it back); it is left where it is, as the preserved env %s: move what you need out, then `git apex remove --force --force %s`",
		s.Path, nestedWords(nested), env.Identity, env.Identity)
	return nil
}

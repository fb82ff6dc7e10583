package pool

import (
	"context"
	"fmt"

	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
)

// A slot whose directory is there but is no worktree any more is broken:
// its .git file is gone (a `git worktree remove` of it was cut short, by
// a kill or a crash: git deletes the files first, the .git file among
// them, then its registration) or points away. git is never run in it
// as it is: with no .git file, git there finds the common dir above it
// and fails ("this operation must be run in a work tree"); with one
// pointing away, it would obey that git directory. Whatever finds one (a
// reclaim, a release, an acquire, start's take, a drain, a trim, `pool
// warm`) removes it and forgets it, with a warning, and goes on (forget):
// a broken slot never stops a command. What was changed in it is kept in
// the trash first when git can still read it: when git still registers
// it, its .git file is put back (heal.RestoreGitfile), and the trash
// keeps it as it keeps a dirty idle slot, unless all git finds changed
// is files deleted, as a cut-short removal leaves it (the entry, when
// there is one, shows them deleted too). One whose registration is gone
// too holds nothing git can read, and goes unkept.

// broken says why a slot's directory is no worktree of this repository;
// "" when it is one, or is not there at all (a slot whose directory is
// gone is forgotten as it is found, with git's registration of it).
func (p *Pool) broken(s *state.Slot) string {
	if !hostpath.Exists(s.Path) {
		return ""
	}
	return heal.GitfileProblem(p.r.Git, s.Path)
}

// forget removes a broken slot (why says what is wrong with it) and
// drops it from the pool, once what was changed in it is kept in the
// trash (see above); it says so in one warning, and returns the trash
// entry (nil when nothing was kept). held is the repository lock when the
// caller holds it, else nil. When what git reads there cannot be kept,
// nothing is deleted: the slot stays as it is, in the pool, and err says
// why (a trash refusal, exit 3).
func (p *Pool) forget(ctx context.Context, held *gitx.Locked, s *state.Slot, why string) (*trash.Entry, error) {
	lk := held
	if lk == nil {
		var err error
		if lk, err = p.r.Lock(ctx); err != nil {
			return nil, err
		}
		defer lk.Unlock()
	}
	var kept *trash.Entry
	readable := heal.RestoreGitfile(lk, s.Path) == nil && p.broken(s) == ""
	if readable {
		changes, err := lk.Status(ctx, s.Path, gitx.StatusOptions{Contained: true})
		if err == nil && !changes.OnlyDeleted() {
			kept, err = (cleaner{p}).keepChanged(ctx, lk, s, true, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("pool slot %s is no worktree any more (%s), and what is changed in it cannot be kept: %w", s.Path, why, err)
		}
	}
	if err := lk.ForgetWorktree(s.Path); err != nil {
		return kept, fmt.Errorf("pool slot %s is no worktree any more (%s), and cannot be removed: %w", s.Path, why, err)
	}
	if err := p.r.Store.Pool().Drop(ctx, s.ID); err != nil {
		return kept, err
	}
	switch {
	case kept != nil:
		p.r.Warnf("pool slot %s was no worktree any more (%s): it is removed and forgotten; what was changed in it is in the trash, `git apex restore %s` gets it back", s.Path, why, kept.Identity)
	case readable:
		p.r.Warnf("pool slot %s was no worktree any more (%s): it is removed and forgotten; nothing in it was changed but files deleted", s.Path, why)
	default:
		p.r.Warnf("pool slot %s was no worktree any more (%s), nor registered with git, so nothing in it could be read to keep: it is removed and forgotten", s.Path, why)
	}
	return kept, nil
}

// discard is forget for a command that goes on whatever becomes of the
// slot: when it cannot be forgotten, a warning says why, and it is left
// as it is, leased to this process when it was, for a later command to
// try again once this one has exited.
func (p *Pool) discard(ctx context.Context, held *gitx.Locked, s *state.Slot, why string) {
	if _, err := p.forget(ctx, held, s, why); err != nil {
		p.r.Warnf("%v; it is left as it is, for a later command to try again", err)
	}
}

package service

import (
	"context"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/intent"
	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/trash"
)

// Restored is an env made again from the trash, with its files put back.
type Restored struct {
	Env  Env         `json:"env"`
	From trash.Entry `json:"from"` // the entry it came from, now dropped
	// BranchRecreated is set when the env's branch did not exist and was
	// made at the entry's head: the entry's own branch, deleted since, or
	// the new one RestoreOptions.Branch named.
	BranchRecreated bool `json:"branch_recreated"`
}

// RestoreOptions are a restore's choices.
type RestoreOptions struct {
	// Branch, when set, is the branch the env is made on instead of the
	// entry's own: made at the entry's head, or one already there.
	Branch string
}

// Trash lists what the trash holds, newest first.
func (s *Service) Trash(ctx context.Context) ([]trash.Entry, error) {
	lk, err := s.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	entries, err := trash.List(ctx, lk, "")
	if entries == nil {
		entries = []trash.Entry{}
	}
	return entries, err
}

// Restore makes the env of identity again from its latest trash entry:
// same identity, mode, branch (made again at its recorded tip when it was
// deleted; opts.Branch instead) and base; then every file comes back as
// it was, staged state included, and the entry is dropped. It refuses
// (exit 3) while the identity names a live env, and when the branch is
// at another commit than the entry's head (the entry's tree on top of
// it would revert what the branch gained since); it fails (exit 7) when
// the trash holds nothing of it. A refusal changes nothing. An intent
// covers the whole (the intent package): a restore cut short is finished
// or undone by `git apex doctor --fix`, and the entry stays until the
// env is whole and recorded.
func (s *Service) Restore(ctx context.Context, identity string, opts RestoreOptions) (*Restored, error) {
	id, err := policy.ParseIdentity(identity)
	if err != nil {
		return nil, fieldError("identity", err)
	}
	if opts.Branch != "" {
		if err := policy.CheckBranchName(opts.Branch); err != nil {
			return nil, fieldError("branch", err)
		}
	}
	e, in, err := s.restoreBegin(ctx, identity, opts.Branch)
	if err != nil {
		return nil, err
	}
	res, err := s.restoreEnv(ctx, id, e, in)
	if err != nil && res == nil {
		// Nothing was recorded: the branch this restore made goes again.
		if uerr := s.restoreUndo(context.WithoutCancel(ctx), in); uerr != nil {
			s.r.Warnf("could not undo the restore of %s: %v; `git apex doctor --fix` finishes it", identity, uerr)
			return nil, err
		}
		in.Done()
		return nil, err
	}
	if err != nil {
		return nil, in.Failed(err)
	}
	in.Done()
	return res, nil
}

// restoreBegin finds identity's latest trash entry and checks, under the
// lock, that no live env holds the identity and that the branch the env
// goes on (branch, or the entry's own) is at the entry's head or
// missing; then it writes the restore's intent and makes a missing
// branch at that head.
func (s *Service) restoreBegin(ctx context.Context, identity, branch string) (trash.Entry, *intent.Intent, error) {
	var e trash.Entry
	lk, err := s.r.Lock(ctx)
	if err != nil {
		return e, nil, err
	}
	defer lk.Unlock()
	entries, err := trash.List(ctx, lk, identity)
	if err != nil {
		return e, nil, err
	}
	if len(entries) == 0 {
		return e, nil, exitcode.New(exitcode.NotFound, "cannot restore %s: the trash holds nothing of it; `git apex restore --list` shows what it holds", identity)
	}
	e = entries[0]
	if env, _, _ := s.r.Store.Resolve(ctx, identity); env != nil {
		if s.restoreCutShort(identity) {
			return e, nil, exitcode.New(exitcode.Refused, "cannot restore %s: a restore of it was cut short at %s; `git apex doctor --fix` finishes it", identity, env.Path)
		}
		return e, nil, exitcode.New(exitcode.Refused, "cannot restore %s: it names a live environment at %s; remove it first with `git apex remove %s`", identity, env.Path, identity)
	}
	if branch == "" {
		branch = e.Branch
	}
	in := &intent.Intent{Op: "restore", Identity: identity, Branch: branch, Start: tipOf(e, branch), Trash: e.Ref}
	if branch != "" {
		worktrees, err := lk.Worktrees(ctx)
		if err != nil {
			return e, nil, err
		}
		if wt, ok := gitx.WorktreeOnBranch(worktrees, branch); ok {
			return e, nil, exitcode.New(exitcode.Refused, "cannot restore %s: branch %s is checked out in the worktree %s, which git-apex did not make for it, "+
				"and putting the work back there would write over what it holds; the entry stays in the trash. "+
				"Switch that worktree to another branch (or remove it), or restore onto a new branch with `git apex restore --branch <new-branch> %s`",
				identity, branch, wt.Path, identity)
		}
		refs, err := lk.Refs(ctx, "refs/heads/"+branch)
		if err != nil {
			return e, nil, err
		}
		if r, ok := refs["refs/heads/"+branch]; ok && r.Hash != tipOf(e, branch) {
			return e, nil, movedBranch(identity, branch, r.Hash, e)
		}
		in.NewBranch = len(refs) == 0
	}
	if err := intent.Write(intent.Dir(s.r.Git.ApexDir()), in); err != nil {
		return e, nil, err
	}
	if in.NewBranch {
		if err := lk.SetRef(ctx, lk.CommonDir, "refs/heads/"+branch, tipOf(e, branch), ""); err != nil {
			in.Done()
			return e, nil, err
		}
	}
	return e, in, nil
}

// tipOf is the commit a restore of e makes branch again at: the tip
// e's own branch had, HEAD detached off it by hand or not; e.Head for
// another branch.
func tipOf(e trash.Entry, branch string) string {
	if branch == e.Branch {
		return e.BranchTip()
	}
	return e.Head
}

// movedBranch is the refusal of a restore of identity onto branch, which
// is at tip, not at the head the entry e recorded.
func movedBranch(identity, branch, tip string, e trash.Entry) error {
	want := tipOf(e, branch)
	return exitcode.New(exitcode.Refused, "cannot restore %s onto branch %s: it is at %.12s, not at %.12s where the work was discarded (%s), "+
		"and the work put back on it would show the change of the branch since as undone; the entry stays in the trash. "+
		"Restore it onto a new branch at %.12s with `git apex restore --branch <new-branch> %s`, or move %s back with `git branch -f %s %.12s` (commits only %.12s holds are then held by its reflog alone)",
		identity, branch, tip, want, e.At.Format(time.RFC3339), e.Head, identity, branch, branch, want, tip)
}

// restoreCutShort reports whether a restore of identity was cut short:
// its intent is there, and its process is gone.
func (s *Service) restoreCutShort(identity string) bool {
	orphans, _ := intent.Orphans(intent.Dir(s.r.Git.ApexDir()))
	for _, in := range orphans {
		if in.Op == "restore" && in.Identity == identity {
			return true
		}
	}
	return false
}

// restoreEnv makes the env of entry e, as the intent in says (its
// branch), and puts its files back; a nil result means nothing was
// recorded.
func (s *Service) restoreEnv(ctx context.Context, id policy.Identity, e trash.Entry, in *intent.Intent) (*Restored, error) {
	req := isolation.StartRequest{Identity: id, Branch: in.Branch, Detach: in.Branch == "", NoAdopt: true}
	if in.Branch != "" && tipOf(e, in.Branch) != e.Head {
		// HEAD was detached off the branch by hand: back detached, as it was.
		req.Branch, req.Detach = "", true
	}
	if req.Detach {
		req.From = e.Head
	}
	var err error
	if req.Isolation, err = policy.ParseMode(e.Mode); err != nil {
		return nil, err
	}
	started, err := s.m.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	env := started.Env
	res := &Restored{Env: envOf(env), From: e, BranchRecreated: in.NewBranch}
	if e.Base != "" && env.Base != e.Base {
		env.Base = e.Base
		if err := s.r.Store.Save(ctx, env, "restored", "base "+e.Base); err != nil {
			return res, err
		}
	}
	lk, err := s.r.Lock(ctx)
	if err != nil {
		return res, err
	}
	defer lk.Unlock()
	if head, err := lk.WorktreeHead(ctx, env.Path); err != nil || head != e.Head {
		return res, exitcode.New(exitcode.Refused, "cannot put the files of %s back: its environment at %s is at %.12s, not at %.12s where they were discarded (%v); they stay in the trash (%s)",
			id, env.Path, head, e.Head, err, e.Ref)
	}
	if err := trash.Put(ctx, lk, env.Path, e); err != nil {
		return res, exitcode.New(exitcode.Git, "cannot restore %s: its environment is back at %s, but its files could not be put back: %v; they stay in the trash (%s)", id, env.Path, err, e.Ref)
	}
	detail := "from the trash of " + e.At.UTC().Format(time.RFC3339)
	if err := s.r.Store.Record(ctx, env, "restored", detail); err != nil {
		return res, err
	}
	res.Env = envOf(env)
	return res, trash.Drop(ctx, lk, e)
}

// restoreUndo deletes the branch the restore of in made, when it is
// still at the entry's head and no worktree has it checked out.
func (s *Service) restoreUndo(ctx context.Context, in *intent.Intent) error {
	if !in.NewBranch {
		return nil
	}
	lk, err := s.r.Lock(ctx)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	_, err = trash.DropBranch(ctx, lk, in.Branch, in.Start)
	return err
}

package service

import (
	"context"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/trash"
)

// Restored is an env made again from the trash, with its files put back.
type Restored struct {
	Env             Env         `json:"env"`
	From            trash.Entry `json:"from"`             // the entry it came from, now dropped
	BranchRecreated bool        `json:"branch_recreated"` // the branch had been deleted and was made again at its tip
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
// deleted) and base; then every file comes back as it was, staged state
// included, and the entry is dropped. It refuses (exit 3) while the
// identity names a live env, and fails (exit 7) when the trash holds
// nothing of it. When the files cannot be put back, the entry stays.
func (s *Service) Restore(ctx context.Context, identity string) (*Restored, error) {
	id, err := policy.ParseIdentity(identity)
	if err != nil {
		return nil, fieldError("identity", err)
	}
	e, recreated, err := s.restoreBranch(ctx, identity)
	if err != nil {
		return nil, err
	}
	req := isolation.StartRequest{Identity: id, Branch: e.Branch, Detach: e.Branch == ""}
	if e.Branch == "" {
		req.From = e.Head
	}
	if req.Isolation, err = policy.ParseMode(e.Mode); err != nil {
		return nil, err
	}
	started, err := s.m.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	env := started.Env
	if e.Base != "" && env.Base != e.Base {
		env.Base = e.Base
		if err := s.r.Store.Save(ctx, env, "restored", "base "+e.Base); err != nil {
			return nil, err
		}
	}
	lk, err := s.r.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if err := trash.Put(ctx, lk, env.Path, e); err != nil {
		return nil, exitcode.New(exitcode.Git, "cannot restore %s: its environment is back at %s, but its files could not be put back: %v; they stay in the trash (%s)", identity, env.Path, err, e.Ref)
	}
	detail := "from the trash of " + e.At.UTC().Format(time.RFC3339)
	if err := s.r.Store.Record(ctx, env, "restored", detail); err != nil {
		return nil, err
	}
	return &Restored{Env: envOf(env), From: e, BranchRecreated: recreated}, trash.Drop(ctx, lk, e)
}

// restoreBranch finds identity's latest trash entry, checks that no live
// env holds the identity, and makes the entry's branch again at its tip
// when it was deleted (recreated).
func (s *Service) restoreBranch(ctx context.Context, identity string) (e trash.Entry, recreated bool, err error) {
	lk, err := s.r.Lock(ctx)
	if err != nil {
		return e, false, err
	}
	defer lk.Unlock()
	entries, err := trash.List(ctx, lk, identity)
	if err != nil {
		return e, false, err
	}
	if len(entries) == 0 {
		return e, false, exitcode.New(exitcode.NotFound, "cannot restore %s: the trash holds nothing of it; `git apex restore --list` shows what it holds", identity)
	}
	e = entries[0]
	if env, _, _ := s.r.Store.Resolve(ctx, identity); env != nil {
		return e, false, exitcode.New(exitcode.Refused, "cannot restore %s: it names a live environment at %s; remove it first with `git apex remove %s`", identity, env.Path, identity)
	}
	if e.Branch == "" {
		return e, false, nil
	}
	refs, err := lk.Refs(ctx, "refs/heads/"+e.Branch)
	if err != nil || len(refs) > 0 {
		return e, false, err
	}
	return e, true, lk.SetRef(ctx, lk.CommonDir, "refs/heads/"+e.Branch, e.Head, "")
}

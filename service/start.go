package service

import (
	"context"
	"errors"

	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/policy"
)

// StartRequest asks for the env of an identity: Identity, or Workflow and
// Name.
type StartRequest struct {
	Identity       string // <workflow>-<name>
	Workflow, Name string // when Identity is ""
	Isolation      string // full, worktree or shared; "" for the policy's choice
	From           string // a branch (which becomes the base) or any commit-ish
	Branch         string // overrides the policy's branch template
	Strict         bool   // fail instead of falling back to a weaker mode
	Detach         bool   // check out the start commit with no branch
	Parent         string // work in this identity's env, as its sub-task
	// Metadata is recorded with an env the start makes.
	Metadata map[string]string
}

// Started is the env a start made or found.
type Started struct {
	Env     Env
	Reused  bool // it existed already; nothing was made
	Adopted bool // an existing worktree was recorded as the env
}

// Created reports whether the start made the env.
func (s *Started) Created() bool { return !s.Reused && !s.Adopted }

// identity is the identity a start request names.
func (r StartRequest) identity() (policy.Identity, error) {
	if r.Identity != "" {
		id, err := policy.ParseIdentity(r.Identity)
		return id, fieldError("identity", err)
	}
	if r.Workflow == "" {
		return policy.Identity{}, &FieldError{Field: "identity", Err: errors.New("no identity: give an identity, or a workflow and a name")}
	}
	if err := policy.CheckWorkflowName(r.Workflow); err != nil {
		return policy.Identity{}, fieldError("workflow", err)
	}
	id, err := policy.NewIdentity(r.Workflow, r.Name)
	return id, fieldError("name", err)
}

// Start makes or reuses the env of an identity (isolation.Manager.Start).
func (s *Service) Start(ctx context.Context, r StartRequest) (*Started, error) {
	id, err := r.identity()
	if err != nil {
		return nil, err
	}
	req := isolation.StartRequest{Identity: id, From: r.From, Branch: r.Branch, Strict: r.Strict, Detach: r.Detach,
		Parent: r.Parent, Metadata: r.Metadata}
	if err := CheckMode("isolation", r.Isolation); err != nil {
		return nil, err
	}
	if r.Isolation != "" {
		if req.Isolation, err = policy.ParseMode(r.Isolation); err != nil {
			return nil, fieldError("isolation", err)
		}
		pol, err := s.r.Policy()
		if err != nil {
			return nil, err
		}
		if err := pol.CheckMode(id.Workflow, req.Isolation); err != nil {
			return nil, fieldError("isolation", err)
		}
	}
	res, err := s.m.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &Started{Env: envOf(res.Env), Reused: res.Reused, Adopted: res.Adopted}
	out.Env.Reused = &out.Reused
	return out, nil
}

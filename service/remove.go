package service

import (
	"context"

	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/trash"
)

// RemoveRequest asks to remove an env (isolation.Manager.Remove).
type RemoveRequest struct {
	Identity     string
	Force        bool   // discard uncommitted work and commits held nowhere else
	DeleteBranch bool   // delete the env's branch too
	Cwd          string // the caller's directory: the env holding it is kept unless Force
	Kill         bool   // end the processes that use the env rather than refuse
	// DeleteUnkept, with Force (`--force --force`), deletes what the trash
	// cannot keep too: see isolation.Unkept.
	DeleteUnkept bool
}

// Removal says what a removal did.
type Removal struct {
	Env           Env      `json:"env"`
	BranchDeleted bool     `json:"branch_deleted"`
	BranchTip     string   `json:"branch_tip,omitempty"` // the commit the deleted branch was at
	AlreadyGone   bool     `json:"already_gone"`         // its directory had been deleted by hand
	DroppedLinks  []string `json:"dropped_links"`        // links that resolved to it
	// Trash is where a forced removal kept the uncommitted work it
	// discarded: `git apex restore <identity>` brings it back.
	Trash *trash.Entry `json:"trash,omitempty"`
	// Unkept is what the removal deleted that the trash cannot keep
	// (DeleteUnkept): restore does not bring it back.
	Unkept *isolation.Unkept `json:"unkept,omitempty"`
	// KeptCommits are the submodule commits a forced removal kept in the
	// main repository's copies of the submodules (not in the trash).
	KeptCommits []isolation.KeptCommits `json:"kept_commits,omitempty"`
}

// Remove removes an env's worktree and marks it destroyed; it refuses
// (exit 3, changing nothing) to lose work unless forced.
// A full env's container is read first, before the repository lock, so
// that one that does not answer holds up no other command; what it makes
// meanwhile comes back under the lock (a file read when nothing).
func (s *Service) Remove(ctx context.Context, r RemoveRequest) (*Removal, error) {
	opts := isolation.RemoveOptions{Force: r.Force, DeleteBranch: r.DeleteBranch, Cwd: r.Cwd, Kill: r.Kill, DeleteUnkept: r.DeleteUnkept}
	if env, _, err := s.r.Resolve(ctx, r.Identity); err == nil {
		_, opts.BackErr = sandbox.BringBackEnv(ctx, s.r, nil, env)
		if ctx.Err() != nil { // interrupted while reading: nothing is removed, forced or not
			return nil, ctx.Err()
		}
	}
	res, err := s.m.Remove(ctx, r.Identity, opts)
	if err != nil {
		return nil, identityError(err)
	}
	return removalOf(res), nil
}

func removalOf(res *isolation.RemoveResult) *Removal {
	dropped := res.DroppedLinks
	if dropped == nil {
		dropped = []string{}
	}
	removal := &Removal{Env: envOf(res.Env), BranchDeleted: res.BranchDeleted, BranchTip: res.BranchTip, AlreadyGone: res.AlreadyGone, DroppedLinks: dropped, Trash: res.Trash, KeptCommits: res.KeptCommits}
	if !res.Unkept.Empty() {
		removal.Unkept = &res.Unkept
	}
	return removal
}

// The outcomes of close and finish.
const (
	Removed   = "removed"   // the env was removed
	Preserved = "preserved" // kept for inspection, with the reason
	Kept      = "kept"      // kept as it was: still used, or the policy keeps it
)

// Ending says what close or finish did with an env.
type Ending struct {
	Env         Env      `json:"env"`
	Outcome     string   `json:"outcome"` // removed, preserved or kept
	Reason      string   `json:"reason,omitempty"`
	StillUsedBy []string `json:"still_used_by,omitempty"` // close: identities that keep the env
	Removal     *Removal `json:"removal,omitempty"`
}

func endingOf(end *isolation.Ending) *Ending {
	out := &Ending{Env: envOf(end.Env), Outcome: Kept, StillUsedBy: end.StillUsedBy}
	switch {
	case end.Removed != nil:
		out.Outcome, out.Removal = Removed, removalOf(end.Removed)
		out.Env = out.Removal.Env
	case end.Preserved != "":
		out.Outcome, out.Reason = Preserved, end.Preserved
	}
	return out
}

// EndOptions are what close and finish take from their caller.
type EndOptions struct {
	Cwd   string // the caller's directory: the env holding it is kept
	Force bool   // close: remove it as remove --force does
	Kill  bool   // end the processes working in the env rather than keep it
}

// Close ends an identity, and removes its env once no identity uses it
// when that is safe (with Force: whatever it holds, its uncommitted work
// kept in the trash); else keeps it as preserved with the reason.
func (s *Service) Close(ctx context.Context, identity string, opts EndOptions) (*Ending, error) {
	end, err := s.m.CloseIdentity(ctx, identity, opts.Cwd, opts.Force, opts.Kill)
	if err != nil {
		return nil, identityError(err)
	}
	return endingOf(end), nil
}

// Finish ends an env's lifecycle: removed on success, preserved on
// failure, as the policy says.
func (s *Service) Finish(ctx context.Context, identity string, failed bool, opts EndOptions) (*Ending, error) {
	end, err := s.m.Finish(ctx, identity, failed, opts.Cwd, opts.Kill)
	if err != nil {
		return nil, identityError(err)
	}
	return endingOf(end), nil
}

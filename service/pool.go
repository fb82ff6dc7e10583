package service

import (
	"context"
	"fmt"

	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/trash"
)

// PoolStatus is what `pool status` finds: the pool's report, once the
// slots whose holder died are reclaimed.
type PoolStatus struct {
	Report    *pool.Report
	Reclaimed int // slots reclaimed from a holder that was gone
}

// PoolStatus reclaims the slots whose holder died and reports the pool's
// slots and totals (pool.Pool.Report).
func (s *Service) PoolStatus(ctx context.Context) (*PoolStatus, error) {
	report, reclaimed, err := pool.New(s.r).Report(ctx)
	if err != nil {
		return nil, err
	}
	return &PoolStatus{Report: report, Reclaimed: reclaimed}, nil
}

// PoolWarmRequest asks for slots and warm containers.
type PoolWarmRequest struct {
	Size       int // slots the pool is to have; -1: [pool].size
	Containers int // idle warm containers each engine is to have; -1: [pool].containers
}

// PoolWarm makes slots until the pool has r.Size of them, then warm
// containers until each engine has r.Containers idle ones
// (pool.Pool.WarmUp; with neither, from the request or the policy, a
// usage error), and reports the pool as it then is.
func (s *Service) PoolWarm(ctx context.Context, r PoolWarmRequest) (*pool.Report, error) {
	p := pool.New(s.r)
	if err := p.WarmUp(ctx, r.Size, r.Containers); err != nil {
		return nil, err
	}
	report, _, err := p.Report(ctx)
	return report, err
}

// PoolDrainRequest asks to remove the pool's idle slots.
type PoolDrainRequest struct {
	All  bool // refuse (exit 3, naming them) while running processes still hold slots
	Kill bool // end the processes working in an idle slot rather than keep it
	// Force deletes an idle slot's untracked nested repositories with it,
	// which the trash cannot keep; without it such a slot is refused.
	// Only the command line sets it: the API and MCP never delete one.
	Force bool
}

// PoolDrained says what a drain removed.
type PoolDrained struct {
	Removed int `json:"removed"` // idle slots removed, those of the cached clones' pools too
	// Trash is the work changed by hand in the slots removed, kept in
	// the trash: `git apex restore <identity>` brings it back.
	Trash []trash.Entry `json:"trash"`
}

// PoolDrain removes the idle slots (pool.Pool.Drain). What it removed
// comes back with its error too: a drain refused for the slots still
// held, or for a clone it could not open, has removed the others.
func (s *Service) PoolDrain(ctx context.Context, r PoolDrainRequest) (*PoolDrained, error) {
	n, kept, err := pool.New(s.r).Drain(ctx, r.All, r.Kill, r.Force)
	if kept == nil {
		kept = []trash.Entry{}
	}
	return &PoolDrained{Removed: n, Trash: kept}, err
}

// CheckCount refuses a count below 0 as a FieldError of field, the name
// the caller gave it ("--size", "containers").
func CheckCount(field string, n int) error {
	if n < 0 {
		return &FieldError{Field: field, Err: fmt.Errorf("%s %d: must be 0 or more", field, n)}
	}
	return nil
}

// count is a count a request may leave out: -1 (the policy's) when it
// does, else n checked by CheckCount.
func count(field string, n *int) (int, error) {
	if n == nil {
		return -1, nil
	}
	return *n, CheckCount(field, *n)
}

// PoolWarmRequestOf is the PoolWarmRequest of the counts a request gave
// (nil: left out, the policy's), checked, under the names it gave them.
func PoolWarmRequestOf(sizeField string, size *int, containersField string, containers *int) (PoolWarmRequest, error) {
	var r PoolWarmRequest
	var err error
	if r.Size, err = count(sizeField, size); err != nil {
		return r, err
	}
	r.Containers, err = count(containersField, containers)
	return r, err
}

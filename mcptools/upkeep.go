package mcptools

import (
	"context"

	"github.com/git-apex/git-apex/doctor"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/service"
	"github.com/git-apex/git-apex/sweep"
	"github.com/git-apex/git-apex/trash"
)

// The repository's upkeep, as the command line's gc, pool, doctor and
// restore do it.

// GCInput is the gc tool's input: gc's flags.
type GCInput struct {
	Where
	Merged    bool   `json:"merged,omitempty"`
	OlderThan string `json:"older_than,omitempty"` // 30m, 12h, 7d, 2w
	Orphans   bool   `json:"orphans,omitempty"`
	DryRun    bool   `json:"dry_run,omitempty"`
	Force     bool   `json:"force,omitempty"`
	Kill      bool   `json:"kill,omitempty"`
}

// GCOutput is the gc tool's answer.
type GCOutput struct {
	Items []sweep.GCItem `json:"items"`
}

func (t *tools) gc(ctx context.Context, s *service.Service, in GCInput) (GCOutput, error) {
	req := service.GCRequest{Merged: in.Merged, Orphans: in.Orphans, DryRun: in.DryRun, Force: in.Force, Kill: in.Kill}
	if in.OlderThan != "" {
		d, err := service.ParseDuration("older_than", in.OlderThan)
		if err != nil {
			return GCOutput{}, err
		}
		req.OlderThan = d
	}
	items, err := s.GC(ctx, req)
	return GCOutput{Items: items}, err
}

func (t *tools) poolStatus(ctx context.Context, s *service.Service, _ Where) (*pool.Report, error) {
	status, err := s.PoolStatus(ctx)
	if err != nil {
		return nil, err
	}
	return status.Report, nil
}

// PoolWarmInput is the pool_warm tool's input: a count left out is the
// policy's.
type PoolWarmInput struct {
	Where
	Size       *int `json:"size,omitempty"`
	Containers *int `json:"containers,omitempty"`
}

func (t *tools) poolWarm(ctx context.Context, s *service.Service, in PoolWarmInput) (*pool.Report, error) {
	req, err := service.PoolWarmRequestOf("size", in.Size, "containers", in.Containers)
	if err != nil {
		return nil, err
	}
	return s.PoolWarm(ctx, req)
}

// PoolDrainInput is the pool_drain tool's input.
type PoolDrainInput struct {
	Where
	All  bool `json:"all,omitempty"`
	Kill bool `json:"kill,omitempty"`
}

func (t *tools) poolDrain(ctx context.Context, s *service.Service, in PoolDrainInput) (*service.PoolDrained, error) {
	return s.PoolDrain(ctx, service.PoolDrainRequest{All: in.All, Kill: in.Kill})
}

// DoctorOutput is the answer of the doctor and doctor_fix tools: those
// whose status is problem are left (the command line's doctor exits 3
// while there are any).
type DoctorOutput struct {
	Findings []doctor.Finding `json:"findings"`
}

// doctor is the handler of doctor (fix false) and doctor_fix.
func (t *tools) doctor(fix bool) func(context.Context, string, Where) (DoctorOutput, []string, error) {
	return func(ctx context.Context, root string, _ Where) (DoctorOutput, []string, error) {
		findings, err := service.Doctor(ctx, root, t.opts.Repo, fix)
		return DoctorOutput{Findings: findings}, nil, err
	}
}

// TrashOutput is the trash tool's answer: its entries, newest first.
type TrashOutput struct {
	Entries []trash.Entry `json:"entries"`
}

func (t *tools) trash(ctx context.Context, s *service.Service, _ Where) (TrashOutput, error) {
	entries, err := s.Trash(ctx)
	return TrashOutput{Entries: entries}, err
}

// RestoreInput is the restore tool's input.
type RestoreInput struct {
	Where
	Identity string `json:"identity"`
	Branch   string `json:"branch,omitempty"`
}

func (t *tools) restore(ctx context.Context, s *service.Service, in RestoreInput) (*service.Restored, error) {
	return s.Restore(ctx, in.Identity, service.RestoreOptions{Branch: in.Branch})
}

package service

import (
	"context"
	"errors"

	"github.com/git-apex/git-apex/doctor"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/state"
)

// Doctor is `git apex doctor` on the repository holding dir, opened with
// opts: where the state, git and the file system disagree, one finding
// each (doctor.Doctor.Run); with fix, what is safe is repaired first.
// Findings whose status is "problem" are left (the command line exits
// 3); they are no error here, so that every front end shows them all.
//
// Unlike the service's other operations it opens the repository itself:
// a state database too damaged to open is one of what it finds. Without
// fix that is its one finding; with fix the database is moved aside and
// rebuilt from git (doctor.RebuildState), whose findings come first.
func Doctor(ctx context.Context, dir string, opts repo.Options, fix bool) ([]doctor.Finding, error) {
	findings, err := runDoctor(ctx, dir, opts, fix)
	var damaged *state.DamagedError
	if !errors.As(err, &damaged) {
		return findings, err
	}
	if !fix {
		return []doctor.Finding{{Check: "state", Status: "problem", Detail: damaged.Error()}}, nil
	}
	rebuilt, err := doctor.RebuildState(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	if findings, err = runDoctor(ctx, dir, opts, fix); err != nil {
		return nil, err
	}
	return append(rebuilt, findings...), nil
}

// runDoctor opens the repository holding dir and runs the doctor on it.
func runDoctor(ctx context.Context, dir string, opts repo.Options, fix bool) ([]doctor.Finding, error) {
	r, err := repo.Open(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	findings, err := doctor.New(r).Run(ctx, fix)
	if err != nil {
		return nil, err
	}
	if findings == nil {
		findings = []doctor.Finding{}
	}
	return findings, nil
}

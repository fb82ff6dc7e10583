package service

import (
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/git-apex/git-apex/envexec"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/heal"
	"github.com/git-apex/git-apex/hostpath"
)

// ExecRequest is a command to run in an env (envexec.Request).
type ExecRequest = envexec.Request

// Exec runs a command in an env, in its container for a full env, and
// returns its exit code. A nil command is a shell; an empty one is
// refused (CheckCommand).
func (s *Service) Exec(ctx context.Context, r ExecRequest) (int, error) {
	if err := CheckCommand("command", r.Cmd); r.Cmd != nil && err != nil {
		return -1, err
	}
	code, err := envexec.Exec(ctx, s.r, r)
	return code, identityError(err)
}

// varName is what a variable's name may be.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Vars is a request's variables for a command as NAME=value, sorted. A
// name of anything but letters, digits and '_' is refused (field "env").
func Vars(vars map[string]string) ([]string, error) {
	var list []string
	for name, value := range vars {
		if !varName.MatchString(name) {
			return nil, &FieldError{Field: "env", Err: fmt.Errorf("invalid variable name %q in env: use letters, digits and '_'", name)}
		}
		list = append(list, name+"="+value)
	}
	slices.Sort(list)
	return list, nil
}

// Changes is what an env holds that its base lacks.
type Changes struct {
	Identity string `json:"identity"`
	Path     string `json:"path"`
	Base     string `json:"base"`
	Status   string `json:"status"`   // `git status --short --branch`
	DiffStat string `json:"diffstat"` // the working tree against its merge base with the base
}

// Changes reads an env's uncommitted and committed changes against its
// base.
func (s *Service) Changes(ctx context.Context, identity string) (*Changes, error) {
	env, _, err := s.r.Resolve(ctx, identity)
	if err != nil {
		return nil, identityError(err)
	}
	if !hostpath.Exists(env.Path) {
		return nil, exitcode.New(exitcode.NotFound, "%s has no worktree at %s: `git apex start %s` makes it again", env.Identity, env.Path, env.Identity)
	}
	if err := heal.CheckGitfile(s.r, env); err != nil {
		return nil, err
	}
	if env.Contained() {
		ctx = gitx.Bound(ctx, env.Path, env.Identity, gitx.ContainedLimit)
	}
	status, diffstat, err := s.r.Git.Summary(ctx, env.Path, env.Base)
	if err != nil {
		return nil, err
	}
	return &Changes{Identity: env.Identity, Path: env.Path, Base: env.Base, Status: status, DiffStat: diffstat}, nil
}

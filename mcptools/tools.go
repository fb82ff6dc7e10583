package mcptools

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/service"
)

// maxOutput is how much of a command's stdout, and of its stderr, a
// result carries; the rest is cut, and the result says so.
const maxOutput = 256 << 10

// defaultTimeout is how long exec lets a command run unless told.
const defaultTimeout = 600 * time.Second

// StartInput is the start tool's input.
type StartInput struct {
	Where
	Identity  string `json:"identity,omitempty"`
	Workflow  string `json:"workflow,omitempty"`
	Name      string `json:"name,omitempty"`
	Isolation string `json:"isolation,omitempty"`
	From      string `json:"from,omitempty"`
	Branch    string `json:"branch,omitempty"`
	Story     string `json:"story,omitempty"`
}

func (t *tools) start(ctx context.Context, s *service.Service, in StartInput) (service.Env, error) {
	req := service.StartRequest{Identity: in.Identity, Workflow: in.Workflow, Name: in.Name, Isolation: in.Isolation,
		From: in.From, Branch: in.Branch}
	if in.Story != "" {
		req.Metadata = map[string]string{"story": in.Story}
	}
	res, err := s.Start(ctx, req)
	if err != nil {
		return service.Env{}, err
	}
	return res.Env, nil
}

// ListInput is the list tool's input.
type ListInput struct {
	Where
	Status string `json:"status,omitempty"`
}

// ListOutput is the list tool's answer.
type ListOutput struct {
	Envs []service.Env `json:"envs"`
}

func (t *tools) list(ctx context.Context, s *service.Service, in ListInput) (ListOutput, error) {
	envs, err := s.List(ctx, in.Status)
	return ListOutput{Envs: envs}, err
}

// ExecInput is the exec tool's input.
type ExecInput struct {
	Where
	Identity       string            `json:"identity"`
	Command        []string          `json:"command"`
	Env            map[string]string `json:"env,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
}

// ExecOutput is the exec tool's answer.
type ExecOutput struct {
	ExitCode int    `json:"exit_code"` // exitcode.Timeout when stopped at its timeout
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Cut      bool   `json:"cut,omitempty"` // the output was longer than maxOutput and was cut
}

func (t *tools) exec(ctx context.Context, s *service.Service, in ExecInput) (ExecOutput, error) {
	if err := service.CheckCommand("command", in.Command); err != nil {
		return ExecOutput{}, err
	}
	vars, err := service.Vars(in.Env)
	if err != nil {
		return ExecOutput{}, err
	}
	timeout := defaultTimeout
	if in.TimeoutSeconds > 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout, stderr := &capped{}, &capped{}
	code, err := s.Exec(cctx, service.ExecRequest{Identity: in.Identity, Cmd: in.Command, Env: vars,
		Stdout: stdout, Stderr: stderr, Background: true})
	out := ExecOutput{ExitCode: code}
	out.Stdout, out.Stderr, out.Cut = stdout.String(), stderr.String(), stdout.cut || stderr.cut
	// However the engine ended it (a worktree's process killed, a
	// container's exec cut off), a command stopped at its timeout is 124.
	if cctx.Err() != nil && ctx.Err() == nil {
		out.ExitCode, out.TimedOut, err = exitcode.Timeout, true, nil
	}
	return out, err
}

// capped keeps the first maxOutput bytes written to it.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := maxOutput - c.buf.Len()
	if len(p) > room {
		c.cut = true
		c.buf.Write(p[:max(room, 0)])
	} else {
		c.buf.Write(p)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// IdentityInput is the input of the tools that take one identity.
type IdentityInput struct {
	Where
	Identity string `json:"identity"`
}

func (t *tools) changes(ctx context.Context, s *service.Service, in IdentityInput) (*service.Changes, error) {
	return s.Changes(ctx, in.Identity)
}

// RemoveInput is the remove tool's input.
type RemoveInput struct {
	Where
	Identity     string `json:"identity"`
	Force        bool   `json:"force,omitempty"`
	DeleteBranch bool   `json:"delete_branch,omitempty"`
	Kill         bool   `json:"kill,omitempty"`
}

func (t *tools) remove(ctx context.Context, s *service.Service, in RemoveInput) (*service.Removal, error) {
	return s.Remove(ctx, service.RemoveRequest{Identity: in.Identity, Force: in.Force, DeleteBranch: in.DeleteBranch, Kill: in.Kill})
}

// FinishInput is the finish tool's input.
type FinishInput struct {
	Where
	Identity string `json:"identity"`
	Failed   bool   `json:"failed,omitempty"`
	Kill     bool   `json:"kill,omitempty"`
}

func (t *tools) finish(ctx context.Context, s *service.Service, in FinishInput) (*service.Ending, error) {
	return s.Finish(ctx, in.Identity, in.Failed, service.EndOptions{Kill: in.Kill})
}

// LinkInput is the link tool's input.
type LinkInput struct {
	Where
	Alias    string `json:"alias"`
	Identity string `json:"identity"`
}

func (t *tools) link(ctx context.Context, s *service.Service, in LinkInput) (*service.Env, error) {
	return s.Link(ctx, in.Alias, in.Identity, "")
}

// LogInput is the log tool's input.
type LogInput struct {
	Where
	Identity string `json:"identity,omitempty"`
}

// LogOutput is the log tool's answer.
type LogOutput struct {
	Events []service.Event `json:"events"`
}

func (t *tools) log(ctx context.Context, s *service.Service, in LogInput) (LogOutput, error) {
	events, err := s.Log(ctx, in.Identity)
	return LogOutput{Events: events}, err
}

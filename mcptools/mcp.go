// Package mcptools is `git apex mcp`: the service layer's operations as
// tools of a Model Context Protocol server on stdio, for coding agents.
// Each tool has a typed input schema and answers the JSON the command
// line prints with --json; a failure comes back as a tool error with the
// command line's message.
package mcptools

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

// maxOutput is how much of a command's stdout, and of its stderr, a
// result carries; the rest is cut, and the result says so.
const maxOutput = 256 << 10

// Serve runs the MCP server on stdin and stdout until the client leaves
// or ctx ends. Every tool call opens the repository at dir afresh, under
// the same locks as the command line.
func Serve(ctx context.Context, dir, version string, opts repo.Options) error {
	s := &tools{dir: dir, opts: opts}
	server := mcp.NewServer(&mcp.Implementation{Name: "git-apex", Version: version}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "start", Description: "Make or reuse the isolated environment (a git worktree on its own " +
		"branch, in a container in full mode) of a unit of work, and return it; its path is where to work."}, s.start)
	mcp.AddTool(server, &mcp.Tool{Name: "list", Description: "List the environments, with what git says of each."}, s.list)
	mcp.AddTool(server, &mcp.Tool{Name: "exec", Description: "Run a command in an environment (in its container in full mode) " +
		"and return its exit code and output."}, s.exec)
	mcp.AddTool(server, &mcp.Tool{Name: "changes", Description: "Show an environment's changes: git status, and the diff stat " +
		"against its base."}, s.changes)
	mcp.AddTool(server, &mcp.Tool{Name: "remove", Description: "Remove an environment; refused when that would lose " +
		"uncommitted work or commits held nowhere else, unless forced."}, s.remove)
	mcp.AddTool(server, &mcp.Tool{Name: "finish", Description: "End an environment's lifecycle: removed on success, kept " +
		"for inspection on failure."}, s.finish)
	mcp.AddTool(server, &mcp.Tool{Name: "link", Description: "Make another identity (issue-42, pr-99) resolve to an " +
		"existing environment."}, s.link)
	mcp.AddTool(server, &mcp.Tool{Name: "log", Description: "The event log: all of it, or an identity's."}, s.log)
	return server.Run(ctx, &mcp.StdioTransport{})
}

// tools holds the tools' handlers.
type tools struct {
	dir  string
	opts repo.Options
}

// with opens the repository for one call and answers what fn returns.
func with[Out any](ctx context.Context, t *tools, fn func(*service.Service) (Out, error)) (*mcp.CallToolResult, Out, error) {
	var out Out
	r, err := repo.Open(ctx, t.dir, t.opts)
	if err != nil {
		return nil, out, err
	}
	defer r.Close()
	out, err = fn(service.New(r))
	return nil, out, err
}

// StartInput is the start tool's input.
type StartInput struct {
	Identity  string `json:"identity,omitempty" jsonschema:"the unit of work, <workflow>-<name>, like feature-login or issue-42; or give workflow and name"`
	Workflow  string `json:"workflow,omitempty" jsonschema:"the kind of work: feature, bugfix, refactor, issue, pr, review, thread, task, or one the policy defines"`
	Name      string `json:"name,omitempty" jsonschema:"the name of the work, with workflow"`
	Isolation string `json:"isolation,omitempty" jsonschema:"full, worktree or shared; default: what the repository's policy says"`
	From      string `json:"from,omitempty" jsonschema:"start from this commit-ish; a branch also becomes the base"`
	Branch    string `json:"branch,omitempty" jsonschema:"the branch to use instead of the policy's template"`
	Story     string `json:"story,omitempty" jsonschema:"free text kept with the environment"`
}

func (t *tools) start(ctx context.Context, _ *mcp.CallToolRequest, in StartInput) (*mcp.CallToolResult, service.Env, error) {
	req := service.StartRequest{Identity: in.Identity, Workflow: in.Workflow, Name: in.Name, Isolation: in.Isolation,
		From: in.From, Branch: in.Branch}
	if in.Story != "" {
		req.Metadata = map[string]string{"story": in.Story}
	}
	return with(ctx, t, func(s *service.Service) (service.Env, error) {
		res, err := s.Start(ctx, req)
		if err != nil {
			return service.Env{}, err
		}
		return res.Env, nil
	})
}

// ListInput is the list tool's input.
type ListInput struct {
	Status string `json:"status,omitempty" jsonschema:"active, preserved, destroyed, live or all; default: live (active and preserved)"`
}

// ListOutput is the list tool's answer.
type ListOutput struct {
	Envs []service.Env `json:"envs"`
}

func (t *tools) list(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListOutput, error) {
	return with(ctx, t, func(s *service.Service) (ListOutput, error) {
		envs, err := s.List(ctx, in.Status)
		return ListOutput{Envs: envs}, err
	})
}

// ExecInput is the exec tool's input.
type ExecInput struct {
	Identity       string            `json:"identity" jsonschema:"the environment to run in"`
	Command        []string          `json:"command" jsonschema:"the program and its arguments, like [\"make\", \"test\"]; use [\"sh\", \"-c\", \"...\"] for a shell line"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"variables the command gets"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" jsonschema:"stop the command after this many seconds; default 600"`
}

// ExecOutput is the exec tool's answer.
type ExecOutput struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Cut      bool   `json:"cut,omitempty" jsonschema:"the output was longer than 256 KiB and was cut"`
}

func (t *tools) exec(ctx context.Context, _ *mcp.CallToolRequest, in ExecInput) (*mcp.CallToolResult, ExecOutput, error) {
	if len(in.Command) == 0 || in.Command[0] == "" {
		return nil, ExecOutput{}, fmt.Errorf("no command given: command is the program and its arguments")
	}
	timeout := 600 * time.Second
	if in.TimeoutSeconds > 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vars, err := service.Vars(in.Env)
	if err != nil {
		return nil, ExecOutput{}, err
	}
	stdout, stderr := &capped{}, &capped{}
	_, code, err := with(ctx, t, func(s *service.Service) (int, error) {
		return s.Exec(cctx, service.ExecRequest{Identity: in.Identity, Cmd: in.Command, Env: vars,
			Stdout: stdout, Stderr: stderr, Background: true})
	})
	out := ExecOutput{ExitCode: code}
	out.Stdout, out.Stderr, out.Cut = stdout.String(), stderr.String(), stdout.cut || stderr.cut
	if err != nil && cctx.Err() != nil && ctx.Err() == nil {
		out.TimedOut, err = true, nil
	}
	return nil, out, err
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
	Identity string `json:"identity" jsonschema:"the environment's identity, or a link to it"`
}

func (t *tools) changes(ctx context.Context, _ *mcp.CallToolRequest, in IdentityInput) (*mcp.CallToolResult, *service.Changes, error) {
	return with(ctx, t, func(s *service.Service) (*service.Changes, error) { return s.Changes(ctx, in.Identity) })
}

// RemoveInput is the remove tool's input.
type RemoveInput struct {
	Identity     string `json:"identity" jsonschema:"the environment to remove"`
	Force        bool   `json:"force,omitempty" jsonschema:"discard uncommitted work and commits held nowhere else"`
	DeleteBranch bool   `json:"delete_branch,omitempty" jsonschema:"delete its branch too"`
	Kill         bool   `json:"kill,omitempty" jsonschema:"end the host's processes still working in it rather than refuse"`
}

func (t *tools) remove(ctx context.Context, _ *mcp.CallToolRequest, in RemoveInput) (*mcp.CallToolResult, *service.Removal, error) {
	return with(ctx, t, func(s *service.Service) (*service.Removal, error) {
		return s.Remove(ctx, service.RemoveRequest{Identity: in.Identity, Force: in.Force, DeleteBranch: in.DeleteBranch, Kill: in.Kill})
	})
}

// FinishInput is the finish tool's input.
type FinishInput struct {
	Identity string `json:"identity" jsonschema:"the environment whose work ended"`
	Failed   bool   `json:"failed,omitempty" jsonschema:"the work failed: keep the environment for inspection"`
}

func (t *tools) finish(ctx context.Context, _ *mcp.CallToolRequest, in FinishInput) (*mcp.CallToolResult, *service.Ending, error) {
	return with(ctx, t, func(s *service.Service) (*service.Ending, error) {
		return s.Finish(ctx, in.Identity, in.Failed, service.EndOptions{})
	})
}

// LinkInput is the link tool's input.
type LinkInput struct {
	Alias    string `json:"alias" jsonschema:"the identity to make resolve to the environment, like issue-42"`
	Identity string `json:"identity" jsonschema:"the environment's identity"`
}

func (t *tools) link(ctx context.Context, _ *mcp.CallToolRequest, in LinkInput) (*mcp.CallToolResult, *service.Env, error) {
	return with(ctx, t, func(s *service.Service) (*service.Env, error) { return s.Link(ctx, in.Alias, in.Identity, "") })
}

// LogInput is the log tool's input.
type LogInput struct {
	Identity string `json:"identity,omitempty" jsonschema:"only this identity's events and its environment's"`
}

// LogOutput is the log tool's answer.
type LogOutput struct {
	Events []service.Event `json:"events"`
}

func (t *tools) log(ctx context.Context, _ *mcp.CallToolRequest, in LogInput) (*mcp.CallToolResult, LogOutput, error) {
	return with(ctx, t, func(s *service.Service) (LogOutput, error) {
		events, err := s.Log(ctx, in.Identity)
		return LogOutput{Events: events}, err
	})
}

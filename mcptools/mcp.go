// Package mcptools is `git apex mcp`: the service layer's operations as
// tools of a Model Context Protocol server on stdio, for coding agents.
// Each tool's input and output schemas are docs/schema/mcp/<tool>.json
// (package schema), with the shapes the command line prints; its
// arguments are read and checked as the API reads a body (service.Decode
// and the service's checks), so the three front ends accept the same
// values and refuse the same ones with the same message and exit code.
// A failure comes back as a tool error with the command line's message,
// and its exit code and field in _meta.
package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-apex/git-apex/docs/schema"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

// Options configure the MCP server.
type Options struct {
	// Repos are the working trees of the repositories served; the first
	// is the one a call that names none works on. The client's roots are
	// served too; with no Repos, the first root is the default.
	Repos   []string
	Version string
	// Repo configures every repository opened for a call.
	Repo repo.Options
}

// Serve runs the MCP server on in and out (stdin and stdout) until the
// client leaves or ctx ends. When in ends, the replies to the calls
// still running are written before it returns. Every tool call opens its
// repository afresh, under the same locks as the command line.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	t := &tools{opts: opts}
	for _, dir := range opts.Repos {
		root, err := realRoot(ctx, dir)
		if err != nil {
			return fmt.Errorf("cannot serve %s: %w", dir, err)
		}
		t.roots = append(t.roots, root)
	}
	server := newServer(t)
	flight := newInFlight(ctx)
	return server.Run(ctx, &mcp.IOTransport{Reader: flight.reader(in), Writer: flight.writer(out)})
}

// realRoot is the main working tree of the repository holding dir.
func realRoot(ctx context.Context, dir string) (string, error) {
	g, err := gitx.Open(ctx, dir)
	if err != nil {
		return "", err
	}
	return hostpath.RealPath(g.MainRoot()), nil
}

// tools holds the tools' handlers.
type tools struct {
	opts  Options
	roots []string // the served repositories' main working trees, real paths
}

// Annotations of the tools, by what they do to the repository.
var (
	readOnly    = &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	additive    = &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)}
	destructive = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}
	// exec runs anything the caller asks.
	anything = &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(true)}
)

// newServer is the MCP server of t's tools.
func newServer(t *tools) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "git-apex", Version: t.opts.Version}, nil)
	addTool(server, t, "start", "Make or reuse the isolated environment (a git worktree on its own branch, in a "+
		"container in full mode) of a unit of work, and return it; its path is where to work.", additive, t.start)
	addTool(server, t, "list", "List the environments, with what git says of each.", readOnly, t.list)
	addTool(server, t, "exec", "Run a command in an environment (in its container in full mode) and return its exit "+
		"code and output; a command stopped at its timeout gives 124 in every mode.", anything, t.exec)
	addTool(server, t, "changes", "Show an environment's changes: git status, and the diff stat against its base.",
		readOnly, t.changes)
	addTool(server, t, "remove", "Remove an environment; refused when that would lose uncommitted work or commits "+
		"held nowhere else, unless forced.", destructive, t.remove)
	addTool(server, t, "finish", "End an environment's lifecycle: removed on success, kept for inspection on failure.",
		destructive, t.finish)
	addTool(server, t, "link", "Make another identity (issue-42, pr-99) resolve to an existing environment.",
		additive, t.link)
	addTool(server, t, "log", "The event log: all of it, or an identity's.", readOnly, t.log)
	addTool(server, t, "gc", "Remove merged and inactive environments (never one with uncommitted work), expire old "+
		"trash entries, and with orphans find and repair what git and git-apex disagree on; dry_run only says what it "+
		"would do.", destructive, t.gc)
	addTool(server, t, "pool_status", "The warm pool's slots (detached worktrees kept ready), their commit and holder, "+
		"and totals, once the slots whose holder died are reclaimed (reset and made idle).", additive, t.poolStatus)
	addTool(server, t, "pool_warm", "Make slots until the warm pool has size of them ([pool].size), then warm "+
		"containers until each engine has containers idle ones ([pool].containers); answers the pool.", additive, t.poolWarm)
	addTool(server, t, "pool_drain", "Remove the warm pool's idle slots (work changed by hand in one goes to the "+
		"trash); with all, refused while running processes still hold slots.", destructive, t.poolDrain)
	addRootTool(server, t, "doctor", "Report where git-apex's state, git and the file system disagree (deleted, moved "+
		"or switched worktrees, crash leftovers, containers, a damaged state database, the hooks); changes nothing.",
		readOnly, t.doctor(false))
	addRootTool(server, t, "doctor_fix", "Repair what doctor finds and is safe to repair (records of worktrees deleted, "+
		"moved or switched by hand, crash leftovers, what a container planted, a damaged state database rebuilt from "+
		"git), then report as doctor does.", destructive, t.doctor(true))
	addTool(server, t, "trash", "What the trash holds, newest first: the uncommitted work forced removals and pool "+
		"drains discarded.", readOnly, t.trash)
	addTool(server, t, "restore", "Make the environment of an identity again from its latest trash entry, with every "+
		"file as it was, and drop the entry; refused while the identity is live or its branch has moved.", additive, t.restore)
	return server
}

// Where is the input every tool takes: the repository to work on.
type Where struct {
	Repository string `json:"repository,omitempty"`
}

func (w Where) where() string { return w.Repository }

// addTool adds the tool name, whose schemas are docs/schema/mcp/<name>.json:
// its arguments are decoded into In, fn runs on the repository they name,
// and what it returns is the structured result (and its JSON, the text,
// followed by what the call warned of).
func addTool[In interface{ where() string }, Out any](server *mcp.Server, t *tools, name, description string,
	hints *mcp.ToolAnnotations, fn func(context.Context, *service.Service, In) (Out, error)) {
	addRootTool(server, t, name, description, hints, func(ctx context.Context, root string, in In) (out Out, warnings []string, err error) {
		r, err := repo.Open(ctx, root, t.opts.Repo)
		if err != nil {
			return out, nil, err
		}
		defer r.Close()
		out, err = fn(ctx, service.New(r), in)
		return out, r.Warnings(), err
	})
}

// addRootTool is addTool for an operation that opens the repository
// itself (service.Doctor): fn gets the main working tree of the one the
// arguments name, and returns what it warned of with its result.
func addRootTool[In interface{ where() string }, Out any](server *mcp.Server, t *tools, name, description string,
	hints *mcp.ToolAnnotations, fn func(ctx context.Context, root string, in In) (Out, []string, error)) {
	input, output, err := schema.Tool(name)
	if err != nil {
		panic("docs/schema/mcp/" + name + ".json: " + err.Error())
	}
	tool := &mcp.Tool{Name: name, Description: description, InputSchema: input, OutputSchema: output, Annotations: hints}
	server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		args := []byte(req.Params.Arguments)
		if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
			args = []byte("{}")
		}
		if err := service.Decode(bytes.NewReader(args), &in); err != nil {
			return failure(err), nil
		}
		root, err := t.pick(ctx, req.Session, in.where())
		if err != nil {
			return failure(err), nil
		}
		out, warnings, err := fn(ctx, root, in)
		if err != nil {
			return failure(err), nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return nil, err
		}
		content := []mcp.Content{&mcp.TextContent{Text: string(data)}}
		for _, w := range warnings {
			content = append(content, &mcp.TextContent{Text: "warning: " + w})
		}
		return &mcp.CallToolResult{Content: content, StructuredContent: json.RawMessage(data)}, nil
	})
}

// failure is err as a tool error: its message, and in _meta its exit
// code and the input at fault.
func failure(err error) *mcp.CallToolResult {
	meta := mcp.Meta{"exit_code": exitcode.Of(err)}
	var fe *service.FieldError
	if errors.As(err, &fe) {
		meta["field"] = fe.Field
	}
	return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
}

// pick returns the repository a call names: one served by --repo or one
// of the client's roots (as an absolute path to its working tree), or
// the first of those when it names none.
func (t *tools) pick(ctx context.Context, session *mcp.ServerSession, named string) (string, error) {
	roots := append([]string(nil), t.roots...)
	if named == "" && len(roots) > 0 {
		return roots[0], nil
	}
	roots = append(roots, clientRoots(ctx, session)...)
	if len(roots) == 0 {
		return "", exitcode.New(exitcode.Usage, "no repository to work on: start `git apex mcp` in one, give it --repo DIR, or offer roots from the client")
	}
	if named == "" {
		return roots[0], nil
	}
	return service.ServedRepository(named, roots, "give `git apex mcp` --repo "+named+", or offer it as a root")
}

// rootsWait is how long a call waits for the client's roots.
const rootsWait = 60 * time.Second

// clientRoots are the main working trees of the repositories the
// client's roots are in, when it offers roots; a root in no repository
// is left out.
func clientRoots(ctx context.Context, session *mcp.ServerSession) []string {
	if session == nil {
		return nil
	}
	if p := session.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return nil
	}
	// A client that does not answer holds up no call for long.
	ctx, cancel := context.WithTimeout(ctx, rootsWait)
	defer cancel()
	res, err := session.ListRoots(ctx, nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, root := range res.Roots {
		u, err := url.Parse(root.URI)
		if err != nil || u.Scheme != "file" {
			continue
		}
		if dir, err := realRoot(ctx, u.Path); err == nil {
			out = append(out, dir)
		}
	}
	return out
}

package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-apex/git-apex/api"
	"github.com/git-apex/git-apex/docs/schema"
	"github.com/git-apex/git-apex/gitx/gittest"
	"github.com/git-apex/git-apex/mcptools"
	"github.com/git-apex/git-apex/service"
)

// TestOneSetOfValues holds every enum of an input the front ends take
// to the service's lists: MCP's tools' (docs/schema/mcp) and the OpenAPI
// document's.
func TestOneSetOfValues(t *testing.T) {
	enum := func(s map[string]any, path ...string) []string {
		var v any = s
		for _, key := range path {
			v = v.(map[string]any)[key]
		}
		var out []string
		for _, e := range v.(map[string]any)["enum"].([]any) {
			out = append(out, e.(string))
		}
		return out
	}
	start, _, err := schema.Tool("start")
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := schema.Tool("list")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	param := doc["paths"].(map[string]any)["/api/developer/worktrees"].(map[string]any)["get"].(map[string]any)["parameters"].([]any)[0].(map[string]any)
	for _, c := range []struct {
		where     string
		got, want []string
	}{
		{"mcp start.isolation", enum(start, "properties", "isolation"), service.Modes},
		{"mcp list.status", enum(list, "properties", "status"), service.Statuses},
		{"api WorkflowRequest.isolation", enum(doc, "components", "schemas", "WorkflowRequest", "properties", "isolation"), service.Modes},
		{"api GET worktrees ?status", enum(param, "schema"), service.Statuses},
		{"env.json mode", enum(doc, "components", "schemas", "Env", "properties", "mode"), service.Modes},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want the service's %q", c.where, c.got, c.want)
		}
	}
}

// TestExecTimeout: a command stopped at its timeout answers exit code
// 124 and timed_out, in worktree mode and, when Docker has the test
// image, in full mode.
func TestExecTimeout(t *testing.T) {
	dir := gittest.NewRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	modes := []string{"worktree"}
	if dockerReady(ctx) {
		modes = append(modes, "full")
		writePolicy(t, dir)
	} else {
		t.Log("SKIPPED full mode: no Docker daemon with image " + testImage + " (.ci/run starts one)")
	}
	session := mcpSession(ctx, t, mcptools.Options{Repos: []string{dir}})
	for _, mode := range modes {
		identity := "feature-slow-" + mode
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "start", Arguments: map[string]any{"identity": identity, "isolation": mode}})
		if err != nil || res.IsError {
			t.Fatalf("start %s: %v %+v", mode, err, res)
		}
		res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "exec", Arguments: map[string]any{"identity": identity,
			"command": []string{"sh", "-c", "echo begun; sleep 120"}, "timeout_seconds": 10}}) // time for a busy engine to start it
		if err != nil || res.IsError {
			t.Fatalf("exec %s: %v %+v", mode, err, res)
		}
		var out struct {
			ExitCode int  `json:"exit_code"`
			TimedOut bool `json:"timed_out"`
		}
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &out)
		if out.ExitCode != 124 || !out.TimedOut {
			t.Errorf("%s: a command stopped at its timeout answers %s; want exit_code 124, timed_out", mode, data)
		}
		// Its container goes with it: the engine is shared.
		session.CallTool(ctx, &mcp.CallToolParams{Name: "remove", Arguments: map[string]any{"identity": identity, "force": true}})
	}
}

// TestStdinEndWaits: a client that sends its calls and closes stdin at
// once gets every reply before the server ends.
func TestStdinEndWaits(t *testing.T) {
	bin := build(t)
	dir := gittest.NewRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp")
	cmd.Dir, cmd.Env = dir, testEnv(t)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"start","arguments":{"identity":"feature-late"}}}`,
	}
	// The start is answered first, so that exec finds the env.
	io.WriteString(stdin, strings.Join(lines, "\n")+"\n")
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	replies := map[int]string{}
	read := func(until int) {
		for replies[until] == "" && sc.Scan() {
			var m struct{ ID int }
			json.Unmarshal(sc.Bytes(), &m)
			replies[m.ID] = sc.Text()
		}
	}
	read(2)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"identity":"feature-late","command":["sh","-c","sleep 1; echo still answered"]}}}`)
	stdin.Close()
	read(3)
	for sc.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the server: %v", err)
	}
	if !strings.Contains(replies[3], `still answered`) {
		t.Errorf("the call in flight when stdin closed got no reply: %v", replies)
	}
}

// writePolicy makes the full envs of the repository at dir use the test
// image.
func writePolicy(t *testing.T, dir string) {
	t.Helper()
	policy := "[container]\nimage = \"" + testImage + "\"\nnetwork = \"none\"\n"
	if err := writeFile(dir+"/.apex.toml", policy); err != nil {
		t.Fatal(err)
	}
}

// TestRepos: `git apex mcp --repo A --repo B` started outside any
// repository serves both, A unless a call names B, and refuses a
// repository it does not serve, naming the field.
func TestRepos(t *testing.T) {
	bin := build(t)
	a, b, other := gittest.NewRepo(t), gittest.NewRepo(t), gittest.NewRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--repo", a, "--repo", b)
	cmd.Dir, cmd.Env = t.TempDir(), testEnv(t)
	session, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	call := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, _ := json.Marshal(res.StructuredContent)
		if res.IsError {
			data = []byte(res.Content[0].(*mcp.TextContent).Text)
		}
		return res, string(data)
	}
	if res, out := call("start", map[string]any{"identity": "feature-in-b", "repository": b}); res.IsError || !strings.Contains(out, `"mode":"worktree"`) {
		t.Fatalf("start in b: %s", out)
	}
	if _, out := call("list", map[string]any{}); strings.Contains(out, "feature-in-b") {
		t.Errorf("a call that names no repository works on the first, a: %s", out)
	}
	if _, out := call("list", map[string]any{"repository": b}); !strings.Contains(out, "feature-in-b") {
		t.Errorf("list of b: %s", out)
	}
	res, out := call("list", map[string]any{"repository": other})
	if !res.IsError || res.Meta["field"] != "repository" || !strings.Contains(out, "is not served here") {
		t.Errorf("a repository not served: %v %v %s", res.IsError, res.Meta, out)
	}
}

// TestCancelledCallEnds: a call the client cancels gets no reply (as
// MCP says), so the end of stdin does not wait for one: the server ends.
func TestCancelledCallEnds(t *testing.T) {
	dir := gittest.NewRepo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- mcptools.Serve(ctx, mcptools.Options{Repos: []string{dir}}, inR, outW); outW.Close() }()
	sc := bufio.NewScanner(outR)
	send := func(line string) { fmt.Fprintln(inW, line) }
	reply := func() string {
		if !sc.Scan() {
			t.Fatal("no reply")
		}
		return sc.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"start","arguments":{"identity":"feature-cancelled"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"identity":"feature-cancelled","command":["sleep","600"]}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the user changed their mind"}}`)
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil && ctx.Err() != nil {
		t.Fatalf("the server did not end: %v", err)
	}
}

package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-apex/git-apex/gitx/gittest"
)

// TestAgentSession runs the built git-apex as an MCP server through the
// SDK's client, as an agent would: it lists the tools, starts an env,
// runs commands in it, reads its changes, and removes it.
func TestAgentSession(t *testing.T) {
	bin := build(t)
	repoDir := gittest.NewRepo(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = repoDir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil {
			t.Errorf("tool %s has no input schema", tool.Name)
		}
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "changes doctor doctor_fix exec finish gc link list log pool_drain pool_status pool_warm remove restore start trash" {
		t.Errorf("tools: %v", names)
	}

	call := func(name string, args map[string]any, out any) *mcp.CallToolResult {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if out != nil && !res.IsError {
			data, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(data, out); err != nil {
				t.Fatalf("%s: %v: %s", name, err, data)
			}
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		return strings.Join(parts, "\n")
	}

	var env struct{ Identity, Path, Branch, Status string }
	call("start", map[string]any{"workflow": "feature", "name": "agent", "story": "an agent's work"}, &env)
	if env.Identity != "feature-agent" || env.Status != "active" {
		t.Fatalf("start: %+v", env)
	}

	var run struct {
		ExitCode int `json:"exit_code"`
		Stdout   string
		Stderr   string
	}
	call("exec", map[string]any{"identity": "feature-agent", "command": []string{"sh", "-c", "echo made > made.txt; echo out; echo err >&2; exit 4"}}, &run)
	if run.ExitCode != 4 || run.Stdout != "out\n" || run.Stderr != "err\n" {
		t.Errorf("exec: %+v", run)
	}
	if data, err := os.ReadFile(filepath.Join(env.Path, "made.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("the command ran elsewhere: %q, %v", data, err)
	}

	var changes struct{ Status, DiffStat string }
	call("changes", map[string]any{"identity": "feature-agent"}, &changes)
	if !strings.Contains(changes.Status, "?? made.txt") {
		t.Errorf("changes: %+v", changes)
	}

	// The command line's refusal, as a tool error with its message.
	res := call("remove", map[string]any{"identity": "feature-agent"}, nil)
	if !res.IsError || !strings.Contains(text(res), "untracked") {
		t.Errorf("remove of a dirty env: error %v: %s", res.IsError, text(res))
	}
	res = call("start", map[string]any{"identity": "not an identity"}, nil)
	if !res.IsError || !strings.Contains(text(res), "invalid identity") {
		t.Errorf("bad identity: error %v: %s", res.IsError, text(res))
	}

	var listed struct{ Envs []struct{ Identity string } }
	call("list", map[string]any{}, &listed)
	if len(listed.Envs) != 1 {
		t.Errorf("list: %+v", listed)
	}
	var removal struct{ Env struct{ Status string } }
	call("remove", map[string]any{"identity": "feature-agent", "force": true}, &removal)
	if removal.Env.Status != "destroyed" {
		t.Errorf("remove: %+v", removal)
	}
	if _, err := os.Stat(env.Path); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	var log struct{ Events []struct{ Event string } }
	call("log", map[string]any{"identity": "feature-agent"}, &log)
	if len(log.Events) < 2 || log.Events[len(log.Events)-1].Event != "removed" {
		t.Errorf("log: %+v", log)
	}

	// A strict full policy is the policy: an agent cannot ask its way
	// out of the container.
	if err := os.WriteFile(filepath.Join(repoDir, ".apex.toml"), []byte("[isolation]\ndefault = \"full\"\nstrict = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = call("start", map[string]any{"workflow": "feature", "name": "escape", "isolation": "worktree"}, nil)
	if !res.IsError || !strings.Contains(text(res), "cannot start in worktree isolation: the policy ("+filepath.Join(repoDir, ".apex.toml")+") asks for full with [isolation].strict = true") {
		t.Errorf("isolation worktree under a strict full policy: error %v: %s", res.IsError, text(res))
	}
	call("list", map[string]any{}, &listed)
	if len(listed.Envs) != 0 {
		t.Errorf("the refused start made %+v", listed)
	}
}

// TestFallbackSkipsContainedCommands: an agent's start whose full env
// falls back to worktree (no engine answers), or that asks for worktree
// under a policy approved for full environments' containers, runs none of
// the approved setup on the host, and the tool's answer warns of it.
func TestFallbackSkipsContainedCommands(t *testing.T) {
	bin := build(t)
	repoDir := gittest.NewRepo(t)
	marker := filepath.Join(t.TempDir(), "HOST-MARKER")
	policy := fmt.Sprintf("[isolation]\ndefault = \"full\"\n[container]\nimage = \"apex-test:latest\"\n[worktree]\nsetup = [%q]\n", "touch "+marker)
	if err := os.WriteFile(filepath.Join(repoDir, ".apex.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(), "XDG_STATE_HOME=", "DOCKER_HOST=unix:///nonexistent/docker.sock", "DOCKER_CONTEXT=",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	trust := exec.Command(bin, "trust")
	trust.Dir, trust.Env = repoDir, env
	if out, err := trust.CombinedOutput(); err != nil {
		t.Fatalf("trust: %s %v", out, err)
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = repoDir, env
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	for name, isolation := range map[string]string{"fell": "", "asked": "worktree"} {
		args := map[string]any{"workflow": "feature", "name": name}
		if isolation != "" {
			args["isolation"] = isolation
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "start", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("start %s: %v %+v", name, err, res)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Fatalf("start %s: the setup ran on the host: %v", name, err)
		}
		var warned []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, "warning: ") {
				warned = append(warned, tc.Text)
			}
		}
		if text := strings.Join(warned, "\n"); !strings.Contains(text, "which you approved to run in full environments' containers only:\n  worktree.setup: touch "+marker) ||
			!strings.Contains(text, "git apex trust --host") {
			t.Errorf("start %s: warnings %q", name, warned)
		}
	}
}

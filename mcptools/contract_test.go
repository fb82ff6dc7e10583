package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-apex/git-apex/api"
	"github.com/git-apex/git-apex/gitx/gittest"
	"github.com/git-apex/git-apex/mcptools"
	"github.com/git-apex/git-apex/repo"
)

// binDir holds the binary the tests build, removed when they end.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds git-apex's engine build once for the tests.
var binary = sync.OnceValues(func() (string, error) {
	var err error
	if binDir, err = os.MkdirTemp("", "apex-mcp-test"); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "git-apex")
	out, err := exec.Command("go", "build", "-tags", "engine", "-o", bin, "../cmd/git-apex").CombinedOutput()
	if err != nil {
		return "", errors.New("go build: " + err.Error() + "\n" + string(out))
	}
	return bin, nil
})

func build(t *testing.T) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// testEnv is the environment of what the tests run: git configured by
// the test alone.
func testEnv(t *testing.T) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
}

// answer is how a front end refused a request: the exit code and the
// message.
type answer struct {
	code    int
	message string
}

// TestSameAnswer gives the command line, the HTTP API and MCP the same
// bad value of each input and wants the same refusal from the three: the
// same exit code (the API's error.code, MCP's _meta.exit_code) and the
// same message.
func TestSameAnswer(t *testing.T) {
	bin := build(t)
	dir := gittest.NewRepo(t)
	env := testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cli := func(args ...string) answer {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("git apex %q: %v: %s", args, err, out)
		}
		// The command line points at its help too: "...; see `git apex start -h`".
		msg := strings.TrimSpace(strings.TrimPrefix(string(out), "git-apex: "))
		if i := strings.LastIndex(msg, "; see `git apex "); i >= 0 && strings.HasSuffix(msg, " -h`") {
			msg = msg[:i]
		}
		return answer{ee.ExitCode(), msg}
	}

	sock := filepath.Join(t.TempDir(), "api.sock")
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- api.Serve(sctx, api.Options{Repos: []string{dir}, Socket: sock}) }()
	t.Cleanup(func() { stop(); <-served })
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	for i := 0; ; i++ { // until it listens
		if resp, err := client.Get("http://apex/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-served:
			t.Fatalf("the server ended: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	http := func(method, path, body string) answer {
		req, _ := http.NewRequest(method, "http://apex"+path, strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct {
			Error struct {
				Code    int
				Message string
			}
		}
		data, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(data, &e); err != nil || e.Error.Code == 0 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
		return answer{e.Error.Code, e.Error.Message}
	}

	session := mcpSession(ctx, t, mcptools.Options{Repos: []string{dir}})
	tool := func(name string, args map[string]any) answer {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			t.Fatalf("%s %v: not refused", name, args)
		}
		code, _ := res.Meta["exit_code"].(float64)
		return answer{int(code), res.Content[0].(*mcp.TextContent).Text}
	}

	for _, c := range []struct {
		input         string
		cli, api, mcp func() answer
		wantCode      int
		wantMessage   string
	}{
		{"status",
			func() answer { return cli("list", "--status", "bogus") },
			func() answer { return http("GET", "/api/developer/worktrees?status=bogus", "") },
			func() answer { return tool("list", map[string]any{"status": "bogus"}) },
			2, `unknown status "bogus": use active, preserved, destroyed, live, all`},
		{"isolation",
			func() answer { return cli("start", "feature", "x", "--isolation", "bogus") },
			func() answer {
				return http("POST", "/api/developer/workflows", `{"id": "feature-x", "isolation": "bogus"}`)
			},
			func() answer { return tool("start", map[string]any{"identity": "feature-x", "isolation": "bogus"}) },
			2, `unknown isolation mode "bogus": use full, worktree, shared`},
		{"identity",
			func() answer { return cli("remove", "not-an identity") },
			func() answer {
				return http("DELETE", "/api/developer/worktrees/"+url.PathEscape("not-an identity"), "")
			},
			func() answer { return tool("remove", map[string]any{"identity": "not-an identity"}) },
			2, `invalid identity "not-an identity": its name part may hold only`},
		{"command",
			func() answer { return cli("exec", "feature-x", "--", "") },
			func() answer {
				return http("POST", "/api/developer/workflows", `{"id": "feature-x", "commands": [""]}`)
			},
			func() answer { return tool("exec", map[string]any{"identity": "feature-x", "command": []string{""}}) },
			2, `no command given`},
		{"unknown environment",
			func() answer { return cli("remove", "feature-nowhere") },
			func() answer { return http("DELETE", "/api/developer/worktrees/feature-nowhere", "") },
			func() answer { return tool("remove", map[string]any{"identity": "feature-nowhere"}) },
			7, `feature-nowhere`},
		{"restore of what the trash lacks",
			func() answer { return cli("restore", "feature-nowhere") },
			func() answer { return http("POST", "/api/trash/feature-nowhere/restore", "") },
			func() answer { return tool("restore", map[string]any{"identity": "feature-nowhere"}) },
			7, `cannot restore feature-nowhere: the trash holds nothing of it`},
		{"pool size",
			func() answer { return cli("pool", "warm") },
			func() answer { return http("POST", "/api/pool/warm", "") },
			func() answer { return tool("pool_warm", map[string]any{}) },
			2, `no pool size: set [pool].size or [pool].containers in the policy`},
	} {
		got := map[string]answer{"cli": c.cli(), "api": c.api(), "mcp": c.mcp()}
		for front, a := range got {
			if a.code != c.wantCode || !strings.Contains(a.message, c.wantMessage) {
				t.Errorf("%s, bad %s: exit %d %q; want exit %d and %q", front, c.input, a.code, a.message, c.wantCode, c.wantMessage)
			}
		}
		if got["cli"] != got["api"] || got["api"] != got["mcp"] {
			t.Errorf("bad %s: the front ends disagree: %+v", c.input, got)
		}
	}
	// Nothing was made by any of it.
	if out, err := exec.Command("git", "-C", dir, "worktree", "list").Output(); err != nil || strings.Count(string(out), "\n") != 1 {
		t.Errorf("worktrees: %s %v", out, err)
	}
}

// mcpSession serves MCP in this process over pipes and connects the
// SDK's client to it.
func mcpSession(ctx context.Context, t *testing.T, opts mcptools.Options) *mcp.ClientSession {
	t.Helper()
	opts.Repo = repo.Options{}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcptools.Serve(ctx, opts, inR, outW)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close(); inW.Close(); <-done })
	return session
}

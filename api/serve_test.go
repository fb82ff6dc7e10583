package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/git-apex/git-apex/api"
	"github.com/git-apex/git-apex/gitx/gittest"
)

// binary is git-apex, built once for the tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apex-api-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "git-apex")
	build := exec.Command("go", "build", "-tags", "engine", "-o", binary, "../cmd/git-apex")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testEnv is the environment of the server and the commands the tests
// run: git configured by the test alone, state and sockets in the test's
// directories.
func testEnv(t *testing.T, home string) []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
}

// server is a running `git apex serve` and a client of it.
type server struct {
	t       *testing.T
	cmd     *exec.Cmd
	repo    string
	env     []string
	base    string // the URL requests go to
	token   string
	client  *http.Client
	socket  string
	exited  chan struct{} // closed once the server has exited, with exitErr set
	exitErr error
	spec    routers.Router
}

// startServer starts `git apex serve args...` in a new repository and
// waits until it listens.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

// startServerEnv is startServer with variables added to the server's
// environment.
func startServerEnv(t *testing.T, vars []string, args ...string) *server {
	t.Helper()
	home, err := os.MkdirTemp("", "apex") // short: a socket path has a limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	s := &server{t: t, repo: gittest.NewRepo(t), env: append(testEnv(t, home), vars...), exited: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"serve"}, args...)...)
	s.cmd.Dir, s.cmd.Env = s.repo, s.env
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			t.Log("server: " + line)
			if i := strings.LastIndex(line, " on "); i >= 0 && strings.HasPrefix(line, "git-apex serve: serving") {
				addr <- line[i+len(" on "):]
			}
		}
		s.exitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
		}
	})
	var on string
	select {
	case on = <-addr:
	case <-s.exited:
		t.Fatalf("the server exited: %v", s.exitErr)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	if path, ok := strings.CutPrefix(on, "unix:"); ok {
		s.socket = path
		s.base = "http://apex"
		s.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}}
	} else {
		s.base = on
		s.client = &http.Client{}
	}
	s.spec = loadSpec(t)
	return s
}

// loadSpec loads the served OpenAPI document, checked.
func loadSpec(t *testing.T) routers.Router {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return router
}

// do sends a request, checks the answer against the OpenAPI document,
// and returns its status and body.
func (s *server) do(method, path string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	s.validate(req, resp, data)
	return resp.StatusCode, data
}

// validate checks an answer against the OpenAPI document: its path and
// method, its status, and its body's schema.
func (s *server) validate(req *http.Request, resp *http.Response, body []byte) {
	s.t.Helper()
	vreq := req.Clone(context.Background())
	// As the document's server says, whatever the test listens on.
	vreq.URL.Scheme, vreq.URL.Host = "http", "127.0.0.1:7777"
	vreq.Host = vreq.URL.Host
	route, params, err := s.spec.FindRoute(vreq)
	if err != nil {
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			return // not an endpoint: nothing to check it against
		}
		s.t.Errorf("%s %s is not in the OpenAPI document: %v", req.Method, req.URL.Path, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route},
		Status:                 resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		s.t.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
}

// want sends a request and fails the test unless it answers status; it
// decodes the body into out when out is not nil.
func (s *server) want(status int, method, path string, body, out any) []byte {
	s.t.Helper()
	got, data := s.do(method, path, body)
	if got != status {
		s.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, got, status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return data
}

// apex runs the command line in the server's repository.
func (s *server) apex(args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = s.repo, s.env
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%v: %s", err, ee.Stderr)
	}
	return string(out), err
}

type workflow struct {
	ID, Identity, WorktreePath, Branch, Mode, Status, EnvStatus, LogPath, Story, Error string
	ExitCode                                                                           *int
}

type apiError struct {
	Error struct {
		Code           int
		Message, Field string
	}
}

// waitWorkflow polls a workflow until its commands end.
func (s *server) waitWorkflow(id string) workflow {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var wf workflow
		s.want(http.StatusOK, "GET", "/api/developer/workflows/"+id, nil, &wf)
		if wf.Status == "completed" || wf.Status == "failed" || time.Now().After(deadline) {
			return wf
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestEndpointsOnSocket(t *testing.T) {
	s := startServer(t)
	info, err := os.Stat(s.socket)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the socket's mode is %v (%v), want 0600", info.Mode().Perm(), err)
	}
	s.want(http.StatusOK, "GET", "/healthz", nil, nil)
	s.want(http.StatusOK, "GET", "/api/openapi.json", nil, nil)

	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-login", "story": "add a login"}, &wf)
	if wf.Identity != "feature-login" || wf.Status != "ready" || wf.Story != "add a login" || wf.Mode != "worktree" {
		t.Errorf("created workflow = %+v", wf)
	}
	if _, err := os.Stat(wf.WorktreePath); err != nil {
		t.Errorf("the worktree is not there: %v", err)
	}
	s.want(http.StatusOK, "POST", "/api/developer/workflows", map[string]any{"workflow": "feature", "name": "login"}, &wf)
	s.want(http.StatusOK, "GET", "/api/developer/workflows/feature-login", nil, &wf)

	var envs []map[string]any
	s.want(http.StatusOK, "GET", "/api/developer/worktrees", nil, &envs)
	if len(envs) != 1 || envs[0]["identity"] != "feature-login" || envs[0]["metadata"].(map[string]any)["story"] != "add a login" {
		t.Errorf("worktrees = %v", envs)
	}
	cli, err := s.apex("list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed []map[string]any
	json.Unmarshal([]byte(cli), &listed)
	for _, field := range []string{"identity", "path", "branch", "status", "git", "links", "metadata"} {
		if fmt.Sprint(listed[0][field]) != fmt.Sprint(envs[0][field]) {
			t.Errorf("%s: the API says %v, list --json %v", field, envs[0][field], listed[0][field])
		}
	}
	s.want(http.StatusOK, "GET", "/api/developer/worktrees?status=all", nil, nil)
	s.want(http.StatusOK, "GET", "/api/developer/worktrees/feature-login", nil, nil)

	s.want(http.StatusCreated, "POST", "/api/developer/worktrees/feature-login/links", map[string]any{"alias": "issue-7"}, nil)
	s.want(http.StatusOK, "GET", "/api/developer/workflows/issue-7", nil, &wf)
	if wf.Identity != "feature-login" || wf.ID != "issue-7" {
		t.Errorf("through the link: %+v", wf)
	}
	s.want(http.StatusNotFound, "DELETE", "/api/developer/worktrees/feature-login/links/issue-8", nil, nil)
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-login/links/issue-7", nil, nil)

	// Refusals, each naming what was wrong.
	var e apiError
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", `{"id": "feature-x", "colour": "red"}`, &e)
	if e.Error.Field != "colour" || e.Error.Code != 2 {
		t.Errorf("unknown field: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", `{"id": 42}`, &e)
	if e.Error.Field != "id" {
		t.Errorf("wrong type: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", `{"id": "../etc"}`, &e)
	if e.Error.Field != "id" || !strings.Contains(e.Error.Message, "invalid identity") {
		t.Errorf("bad identity: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", `{"id": "feature-y", "isolation": "vm"}`, &e)
	if e.Error.Field != "isolation" {
		t.Errorf("bad isolation: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", `{"id": "feature-y", "repository": "/elsewhere"}`, &e)
	if e.Error.Field != "repository" {
		t.Errorf("repository not served: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", `{"targetRepository": "https://example.com/r.git"}`, &e)
	if e.Error.Field != "targetRepository" {
		t.Errorf("URL without --allow-clone: %+v", e)
	}
	s.want(http.StatusBadRequest, "GET", "/api/developer/worktrees?repository=https://example.com/r.git", nil, &e)
	if e.Error.Field != "repository" {
		t.Errorf("a GET naming a URL: %+v", e)
	}
	s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", ``, nil)
	s.want(http.StatusRequestEntityTooLarge, "POST", "/api/developer/workflows", `{"story": "`+strings.Repeat("x", 2<<20)+`"}`, nil)
	s.want(http.StatusBadRequest, "GET", "/api/developer/worktrees?status=sleeping", nil, nil)
	s.want(http.StatusBadRequest, "DELETE", "/api/developer/worktrees/feature-login?force=maybe", nil, nil)
	s.want(http.StatusNotFound, "GET", "/api/developer/worktrees/feature-nothing", nil, nil)
	s.want(http.StatusNotFound, "DELETE", "/api/developer/worktrees/feature-nothing", nil, nil)
	s.want(http.StatusNotFound, "GET", "/api/developer/workflows/feature-nothing", nil, nil)

	// remove's safety: a dirty env is kept until forced.
	if err := os.WriteFile(filepath.Join(wf.WorktreePath, "work.txt"), []byte("unsaved"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.want(http.StatusConflict, "DELETE", "/api/developer/worktrees/feature-login", nil, &e)
	if !strings.Contains(e.Error.Message, "untracked") || e.Error.Code != 3 {
		t.Errorf("dirty: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(wf.WorktreePath, "work.txt")); err != nil {
		t.Fatalf("the refused removal lost work: %v", err)
	}
	var removal struct {
		Env           struct{ Status string }
		BranchDeleted bool `json:"branch_deleted"`
	}
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-login?force=true&deleteBranch=true", nil, &removal)
	if removal.Env.Status != "destroyed" || !removal.BranchDeleted {
		t.Errorf("removal = %+v", removal)
	}
	s.want(http.StatusOK, "GET", "/api/developer/workflows/feature-login", nil, &wf)
	if wf.EnvStatus != "destroyed" {
		t.Errorf("after removal: %+v", wf)
	}
}

func TestTCPNeedsToken(t *testing.T) {
	s := startServer(t, "--listen", "127.0.0.1:0")
	for _, token := range []string{"", strings.Repeat("0", 64)} {
		s.token = token
		var e apiError
		s.want(http.StatusUnauthorized, "POST", "/api/developer/workflows", map[string]any{"id": "feature-a"}, &e)
		s.want(http.StatusUnauthorized, "GET", "/api/developer/worktrees", nil, nil)
	}
	s.want(http.StatusOK, "GET", "/healthz", nil, nil)
	out, err := s.apex("serve", "--print-token")
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(out)
	var envs []map[string]any
	s.want(http.StatusOK, "GET", "/api/developer/worktrees", nil, &envs)
	if len(envs) != 0 {
		t.Errorf("requests without the token made %d envs", len(envs))
	}
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-a"}, nil)
	token := filepath.Join(envValue(s.env, "XDG_STATE_HOME"), "git-apex", "token")
	if info, err := os.Stat(token); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the token file's mode: %v, %v", info, err)
	}
	if _, err := s.apex("serve", "--listen", "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("a non-loopback address without TLS: %v", err)
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func TestConcurrentWorkflows(t *testing.T) {
	s := startServer(t)
	statuses := make(chan int, 70)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := s.do("POST", "/api/developer/workflows", map[string]any{"id": fmt.Sprintf("task-n%d", i)})
			if code != http.StatusCreated {
				t.Errorf("task-n%d: %d %s", i, code, body)
			}
			statuses <- code
		}()
	}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := s.do("POST", "/api/developer/workflows", map[string]any{"id": "task-same"})
			if code != http.StatusCreated && code != http.StatusOK {
				t.Errorf("task-same: %d %s", code, body)
			}
			statuses <- code
		}()
	}
	wg.Wait()
	close(statuses)
	created := 0
	for code := range statuses {
		if code == http.StatusCreated {
			created++
		}
	}
	if created != 51 {
		t.Errorf("%d answers said created, want 50 distinct and 1 of the same", created)
	}
	var envs []map[string]any
	s.want(http.StatusOK, "GET", "/api/developer/worktrees", nil, &envs)
	if len(envs) != 51 {
		t.Errorf("%d envs, want 51", len(envs))
	}
	worktrees := gittest.Git(t, s.repo, "worktree", "list")
	if n := strings.Count(worktrees, "\n") + 1; n != 52 {
		t.Errorf("git has %d worktrees, want 52 (the main one and 51)", n)
	}
}

func TestFailedCommandIsPreserved(t *testing.T) {
	s := startServer(t)
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows",
		map[string]any{"id": "feature-fail", "commands": []string{"sh", "-c", "echo about to fail $GREETING; exit 3"}, "env": map[string]string{"GREETING": "hello"}}, &wf)
	if wf.Status != "queued" && wf.Status != "running" {
		t.Errorf("status at start: %q", wf.Status)
	}
	wf = s.waitWorkflow("feature-fail")
	if wf.Status != "failed" || wf.ExitCode == nil || *wf.ExitCode != 3 {
		t.Fatalf("workflow = %+v", wf)
	}
	log, err := os.ReadFile(wf.LogPath)
	if err != nil || !strings.Contains(string(log), "about to fail hello") {
		t.Errorf("log %s: %q, %v", wf.LogPath, log, err)
	}
	// A client that cannot read the server's files gets the same output.
	if code, out := s.do("GET", "/api/developer/workflows/feature-fail/output", nil); code != http.StatusOK || string(out) != string(log) {
		t.Errorf("GET .../output: %d %q, want the log %q", code, out, log)
	}
	var end struct{ Outcome string }
	s.want(http.StatusOK, "POST", "/api/developer/worktrees/feature-fail/finish", map[string]any{"failed": true}, &end)
	if end.Outcome != "preserved" {
		t.Errorf("finish failed: %+v", end)
	}
	s.want(http.StatusOK, "GET", "/api/developer/workflows/feature-fail", nil, &wf)
	if wf.EnvStatus != "preserved" {
		t.Errorf("after finish: %+v", wf)
	}
	if _, err := os.Stat(wf.WorktreePath); err != nil {
		t.Errorf("the preserved worktree is gone: %v", err)
	}

	// A command that succeeds, then finish on success removes the env.
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-ok", "commands": []string{"true"}}, nil)
	if wf = s.waitWorkflow("feature-ok"); wf.Status != "completed" || *wf.ExitCode != 0 {
		t.Errorf("workflow = %+v", wf)
	}
	s.want(http.StatusOK, "POST", "/api/developer/worktrees/feature-ok/finish", nil, &end)
	if end.Outcome != "removed" {
		t.Errorf("finish: %+v", end)
	}
}

func TestEventsSeeTheCommandLine(t *testing.T) {
	s := startServer(t)
	req, _ := http.NewRequest("GET", s.base+"/api/events", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := s.client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	if _, err := s.apex("start", "feature", "seen"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.apex("remove", "feature-seen"); err != nil {
		t.Fatal(err)
	}
	var seen []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && len(seen) < 2 {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev struct{ Identity, Event string }
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			seen = append(seen, ev.Identity+" "+ev.Event)
		}
	}
	if strings.Join(seen, ", ") != "feature-seen created, feature-seen removed" {
		t.Errorf("events seen: %v (%v)", seen, sc.Err())
	}
}

func TestShutdownStopsCommands(t *testing.T) {
	s := startServer(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows",
		map[string]any{"id": "feature-long", "commands": []string{"sh", "-c", "echo $$ > '" + pidFile + "'; exec sleep 300"}}, &wf)
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		data, _ := os.ReadFile(pidFile)
		fmt.Sscan(string(data), &pid)
	}
	if pid == 0 {
		t.Fatal("the command did not start")
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.exitErr != nil {
			t.Errorf("the server exited with %v", s.exitErr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit")
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("the command (pid %d) outlived the server", pid)
	}
	out, err := s.apex("list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var envs []struct {
		Identity, Path, Status string
		Metadata               map[string]string
	}
	json.Unmarshal([]byte(out), &envs)
	if len(envs) != 1 || envs[0].Metadata["workflow.status"] != "failed" || !strings.Contains(envs[0].Metadata["workflow.error"], "shut down") {
		t.Errorf("after shutdown: %+v", envs)
	}
	if _, err := os.Stat(envs[0].Path); err != nil {
		t.Errorf("the env's worktree is gone: %v", err)
	}
	if _, err := os.Stat(s.socket); !os.IsNotExist(err) {
		t.Errorf("the socket was left behind: %v", err)
	}
	if out, err := s.apex("doctor"); strings.Contains(out, "intent") {
		t.Errorf("doctor after shutdown: %v\n%s", err, out)
	}
}

// TestLogFollow follows the log from the command line, as the event
// stream does, from the newest event on.
func TestLogFollow(t *testing.T) {
	s := startServer(t)
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-before"}, nil)
	out, err := s.apex("log", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var events []struct{ ID int64 }
	json.Unmarshal([]byte(out), &events)
	last := events[len(events)-1].ID
	follow := exec.Command(binary, "log", "--follow", "--json", "--after", fmt.Sprint(last))
	follow.Dir, follow.Env = s.repo, s.env
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-after"}, nil)
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-after", nil, nil)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	for len(seen) < 2 {
		select {
		case line := <-lines:
			var ev struct{ Identity, Event string }
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("%v: %q", err, line)
			}
			seen = append(seen, ev.Identity+" "+ev.Event)
		case <-time.After(30 * time.Second):
			t.Fatalf("log --follow printed only %v", seen)
		}
	}
	if strings.Join(seen, ", ") != "feature-after created, feature-after removed" {
		t.Errorf("log --follow printed %v", seen)
	}
	follow.Process.Signal(syscall.SIGINT)
	if err := follow.Wait(); err != nil {
		t.Errorf("log --follow ended with %v after SIGINT, want success", err)
	}
}

// TestMaxRunningQueues holds the second workflow's command back while
// the first runs, with --max-running 1.
func TestMaxRunningQueues(t *testing.T) {
	s := startServer(t, "--max-running", "1")
	release := filepath.Join(t.TempDir(), "release")
	s.want(http.StatusCreated, "POST", "/api/developer/workflows",
		map[string]any{"id": "task-first", "commands": []string{"sh", "-c", "while [ ! -e '" + release + "' ]; do sleep 0.05; done"}}, nil)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var wf workflow
		s.want(http.StatusOK, "GET", "/api/developer/workflows/task-first", nil, &wf)
		if wf.Status == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first workflow never ran: %+v", wf)
		}
	}
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "task-second", "commands": []string{"true"}}, &wf)
	s.want(http.StatusOK, "GET", "/api/developer/workflows/task-second", nil, &wf)
	if wf.Status != "queued" {
		t.Errorf("the second workflow is %q while the first runs, want queued", wf.Status)
	}
	var e apiError
	s.want(http.StatusConflict, "POST", "/api/developer/workflows", map[string]any{"id": "task-first", "commands": []string{"true"}}, &e)
	s.want(http.StatusConflict, "DELETE", "/api/developer/worktrees/task-first", nil, &e)
	if !strings.Contains(e.Error.Message, "commands are running") {
		t.Errorf("delete while running: %+v", e)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if wf := s.waitWorkflow("task-first"); wf.Status != "completed" {
		t.Errorf("first: %+v", wf)
	}
	if wf := s.waitWorkflow("task-second"); wf.Status != "completed" {
		t.Errorf("second: %+v", wf)
	}
}

// TestCloneIsServed clones a repository named by URL once, and finds its
// envs afterwards, with and without ?repository=.
func TestCloneIsServed(t *testing.T) {
	s := startServer(t, "--allow-clone")
	remote := "file://" + gittest.NewRepo(t)
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": "feature-cloned", "targetRepository": remote}, &wf)
	var got struct{ Repository string }
	s.want(http.StatusOK, "GET", "/api/developer/workflows/feature-cloned", nil, &got)
	if !strings.Contains(got.Repository, filepath.Join(".git", "apex", "clones")) {
		t.Errorf("the clone is at %q", got.Repository)
	}
	var envs []map[string]any
	s.want(http.StatusOK, "GET", "/api/developer/worktrees?repository="+url.QueryEscape(got.Repository), nil, &envs)
	if len(envs) != 1 || envs[0]["identity"] != "feature-cloned" {
		t.Errorf("the clone's worktrees: %v", envs)
	}
	s.want(http.StatusOK, "POST", "/api/developer/workflows", map[string]any{"id": "feature-cloned", "targetRepository": remote}, nil)
	clones, _ := filepath.Glob(filepath.Join(s.repo, ".git", "apex", "clones", "*", ".git"))
	if len(clones) != 1 {
		t.Errorf("clones: %v", clones)
	}
	s.want(http.StatusOK, "DELETE", "/api/developer/worktrees/feature-cloned", nil, nil)
}

// A start answers its warnings (a fallback to a weaker mode than asked)
// and takes the branch to use, as MCP's start does.
func TestWorkflowWarningsAndBranch(t *testing.T) {
	s := startServerEnv(t, []string{"DOCKER_HOST=unix:///nonexistent/docker.sock", "DOCKER_CONTEXT="})
	var wf struct {
		workflow
		Warnings []string
	}
	s.want(http.StatusCreated, "POST", "/api/developer/workflows",
		map[string]any{"id": "feature-warned", "isolation": "full", "branch": "topic/warned"}, &wf)
	if wf.Mode != "worktree" || wf.Branch != "topic/warned" {
		t.Errorf("workflow = %+v", wf)
	}
	if len(wf.Warnings) != 1 || !strings.Contains(wf.Warnings[0], "feature-warned asked for full isolation but gets worktree") {
		t.Errorf("warnings = %q", wf.Warnings)
	}
	var bad apiError
	s.want(http.StatusNotFound, "GET", "/api/developer/workflows/feature-warned/output", nil, &bad)
	if bad.Error.Code != 7 || !strings.Contains(bad.Error.Message, "ran no commands") {
		t.Errorf("output of a workflow with no commands: %+v", bad)
	}
}

// TestFallbackRunsNoContainedCommandOnHost: a start whose full env falls
// back to worktree (no engine answers) runs none of the setup approved
// for full environments' containers on the host, and says so in its
// warnings; so does a start that asks for worktree under such a policy.
func TestFallbackRunsNoContainedCommandOnHost(t *testing.T) {
	s := startServerEnv(t, []string{"DOCKER_HOST=unix:///nonexistent/docker.sock", "DOCKER_CONTEXT="})
	marker := filepath.Join(t.TempDir(), "HOST-MARKER")
	policy := fmt.Sprintf("[isolation]\ndefault = \"full\"\n[container]\nimage = \"apex-test:latest\"\n[worktree]\nsetup = [%q]\n", "touch "+marker)
	if err := os.WriteFile(filepath.Join(s.repo, ".apex.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := s.apex("trust"); err != nil {
		t.Fatalf("trust: %s %v", out, err)
	}
	for id, isolation := range map[string]string{"feature-fell": "", "feature-asked": "worktree"} {
		var wf struct {
			workflow
			Warnings []string
		}
		s.want(http.StatusCreated, "POST", "/api/developer/workflows", map[string]any{"id": id, "isolation": isolation}, &wf)
		if wf.Mode != "worktree" {
			t.Errorf("%s: mode %s", id, wf.Mode)
		}
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Fatalf("%s: the setup ran on the host: %v", id, err)
		}
		warned := strings.Join(wf.Warnings, "\n")
		if !strings.Contains(warned, "not running these commands of the policy there, which you approved to run in full environments' containers only:\n  worktree.setup: touch "+marker) ||
			!strings.Contains(warned, "git apex trust --host") {
			t.Errorf("%s: warnings = %q", id, wf.Warnings)
		}
	}
}

// TestStrictPolicyHolds: an agent asking the API for a weaker isolation
// than a strict policy's full is refused (400, field isolation, exit 2)
// naming the policy, and nothing is made.
func TestStrictPolicyHolds(t *testing.T) {
	s := startServer(t)
	policyFile := filepath.Join(s.repo, ".apex.toml")
	if err := os.WriteFile(policyFile, []byte("[isolation]\ndefault = \"full\"\nstrict = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"worktree", "shared"} {
		var e apiError
		s.want(http.StatusBadRequest, "POST", "/api/developer/workflows", map[string]any{"id": "feature-escape", "isolation": mode}, &e)
		if e.Error.Field != "isolation" || e.Error.Code != 2 || !strings.Contains(e.Error.Message, "cannot start in "+mode+" isolation: the policy ("+policyFile+") asks for full with [isolation].strict = true") {
			t.Errorf("isolation %s under a strict full policy: %+v", mode, e)
		}
	}
	if out, err := s.apex("list", "--all", "--json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("something was made: %s %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.repo), filepath.Base(s.repo)+".worktrees")); !os.IsNotExist(err) {
		t.Errorf("a worktree directory was made: %v", err)
	}
}

// TestShutdownStopsContainedCommands: a full env's workflow command is
// stopped inside its container when the server shuts down, as the
// command line's exec stops it, and it is recorded as interrupted (130).
func TestShutdownStopsContainedCommands(t *testing.T) {
	docker := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	}
	if _, err := docker("image", "inspect", "apex-test:latest"); err != nil {
		t.Skip("no Docker daemon with image apex-test:latest (DOCKER_HOST): .ci/run starts one")
	}
	s := startServer(t)
	policy := "[container]\nimage = \"apex-test:latest\"\nnetwork = \"none\"\n"
	if err := os.WriteFile(filepath.Join(s.repo, ".apex.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	var wf workflow
	s.want(http.StatusCreated, "POST", "/api/developer/workflows",
		map[string]any{"id": "feature-long", "isolation": "full", "commands": []string{"sh", "-c", "echo started; sleep 120; echo ended"}}, &wf)
	if wf.Mode != "full" {
		t.Fatalf("the workflow is not in a full env: %+v", wf)
	}
	var env struct{ Container string }
	s.want(http.StatusOK, "GET", "/api/developer/worktrees/feature-long", nil, &env)
	if env.Container == "" {
		t.Fatal("the full env has no container")
	}
	t.Cleanup(func() { s.apex("remove", "--force", "feature-long") })
	sleeping := func() bool {
		out, err := docker("exec", env.Container, "ps", "-o", "args")
		if err != nil {
			t.Fatalf("docker exec ps: %v\n%s", err, out)
		}
		return strings.Contains(string(out), "sleep 120")
	}
	for deadline := time.Now().Add(60 * time.Second); !sleeping(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command did not start in the container")
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.exitErr != nil {
			t.Errorf("the server exited with %v", s.exitErr)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not exit")
	}
	if sleeping() {
		t.Error("the command outlived the server in the container")
	}
	out, err := s.apex("list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var envs []struct{ Metadata map[string]string }
	json.Unmarshal([]byte(out), &envs)
	if len(envs) != 1 || envs[0].Metadata["workflow.status"] != "failed" || envs[0].Metadata["workflow.exit_code"] != "130" {
		t.Errorf("after shutdown: %+v", envs)
	}
}

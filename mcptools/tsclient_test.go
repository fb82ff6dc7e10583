package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-apex/git-apex/gitx/gittest"
)

// testImage is the image of full envs; .ci/run builds it.
const testImage = "apex-test:latest"

// TestTypeScriptClient runs an agent's session through the official MCP
// TypeScript SDK (testdata/mcpclient, installed from npm with its
// lockfile): `git apex mcp` started outside the repository, which the
// client offers as a root; in worktree mode, and in full mode when a
// Docker daemon with the test image answers, it edits a tracked file and
// commits through exec, reads changes and finishes; the commit must be on
// the env's branch in the repository.
func TestTypeScriptClient(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIPPED: no %s (Debian's nodejs and npm; .ci/run installs them): the TypeScript SDK's client cannot run", tool)
		}
	}
	bin := build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	client := t.TempDir()
	for _, name := range []string{"package.json", "package-lock.json", "client.mjs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mcpclient", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(client, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npm := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	npm.Dir = client
	if out, err := npm.CombinedOutput(); err != nil {
		// The registry not answering is this machine's, not git-apex's.
		t.Skipf("SKIPPED: npm ci could not install the TypeScript SDK from the registry: %v\n%s", err, out)
	}

	dir := gittest.NewRepo(t)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# a project\n"), 0o644)
	gittest.Git(t, dir, "config", "user.name", "An Agent")
	gittest.Git(t, dir, "config", "user.email", "agent@example.com")
	gittest.Git(t, dir, "add", "README.md")
	gittest.Git(t, dir, "commit", "-qm", "a readme")

	modes := "worktree"
	env := testEnv(t)
	if dockerReady(ctx) {
		modes += ",full"
		writePolicy(t, dir)
	} else {
		t.Log("SKIPPED full mode: no Docker daemon with image " + testImage + " (.ci/run starts one)")
	}
	node := exec.CommandContext(ctx, "node", "client.mjs")
	node.Dir = client
	node.Env = append(env, "APEX_BIN="+bin, "APEX_REPO="+dir, "APEX_MODES="+modes, "APEX_CWD="+t.TempDir())
	node.Stderr = &testWriter{t}
	out, err := node.Output()
	if err != nil {
		t.Fatalf("the TypeScript client failed: %v\n%s", err, out)
	}

	sc := bufio.NewScanner(strings.NewReader(string(out)))
	seen := 0
	for sc.Scan() {
		var got struct {
			Mode, Branch, Outcome string
			Exec                  struct {
				ExitCode int `json:"exit_code"`
				Stdout   string
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		seen++
		if got.Exec.Stdout != "edit README through mcp\n" || got.Outcome != "removed" {
			t.Errorf("%s: %+v", got.Mode, got)
		}
		subject := gittest.Git(t, dir, "log", "-1", "--format=%s", got.Branch) // trimmed
		readme := gittest.Git(t, dir, "show", got.Branch+":README.md")
		if subject != "edit README through mcp" || readme != "# a project\nedited by the agent" {
			t.Errorf("%s: the branch %s has %q with README %q; want the agent's commit", got.Mode, got.Branch, subject, readme)
		}
	}
	if want := strings.Count(modes, ",") + 1; seen != want {
		t.Errorf("the client reported %d environments, want %d:\n%s", seen, want, out)
	}
}

// dockerReady says whether the Docker daemon (DOCKER_HOST) answers and
// has the test image.
func dockerReady(ctx context.Context) bool {
	if _, err := exec.LookPath("docker"); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, "docker", "image", "inspect", testImage).Run() == nil
}

// testWriter logs what is written to it.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func writeFile(name, content string) error { return os.WriteFile(name, []byte(content), 0o644) }

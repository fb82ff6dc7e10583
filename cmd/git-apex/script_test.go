package main

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the scripts' expected output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"git-apex": func() {
		clock = testClock(os.Getenv("APEX_TEST_NOW"))
		main()
	}})
}

// testClock is the clock a script sets with APEX_TEST_NOW: a time
// (RFC 3339), which stands still so that outputs can be compared; or an
// offset from the real clock (a Go duration such as -240h), to make
// records that look days old. "" is the real clock.
func testClock(now string) func() time.Time {
	if now == "" {
		return nil
	}
	if at, err := time.Parse(time.RFC3339, now); err == nil {
		return func() time.Time { return at }
	}
	offset, err := time.ParseDuration(now)
	if err != nil {
		panic("APEX_TEST_NOW=" + now + ": neither a time nor a duration")
	}
	return func() time.Time { return time.Now().Add(offset) }
}

// TestScripts runs the scenarios in testdata/script, each in its own
// directory with its own HOME and a git configured only by the script,
// the container scenarios against the engine DOCKER_HOST names.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(engineAt(os.Getenv("DOCKER_HOST"))))
}

// TestScriptsOnPodman runs the container scenarios (those with a
// [docker] condition) again, against the podman service
// APEX_TEST_PODMAN_HOST names (.ci/run starts one).
func TestScriptsOnPodman(t *testing.T) {
	host := os.Getenv("APEX_TEST_PODMAN_HOST")
	if host == "" {
		t.Skip("no podman service (APEX_TEST_PODMAN_HOST): .ci/run starts one")
	}
	engine := engineAt(host)
	if !engine.ready() {
		t.Fatalf("the podman service at %s does not answer with image %s", host, testImage)
	}
	params := scriptParams(engine)
	all, err := filepath.Glob(filepath.Join(params.Dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range all {
		if data, err := os.ReadFile(file); err == nil && strings.Contains(string(data), "[!docker]") {
			params.Files = append(params.Files, file)
		}
	}
	params.Dir = ""
	testscript.Run(t, params)
}

// scriptParams runs the scenarios with engine as their container engine.
func scriptParams(engine *testEngine) testscript.Params {
	return testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup:               func(env *testscript.Env) error { return setupScript(env, engine) },
		Condition:           engine.condition,
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits":       cmdExits,
			"redact":      cmdRedact,
			"holddb":      cmdHoldDB,
			"crash":       cmdCrash,
			"rocopy":      cmdReadOnlyView,
			"sql":         cmdSQL,
			"sqlfile":     cmdSQLFile,
			"releasedb":   cmdReleaseDB,
			"schema":      cmdSchema,
			"sshd":        cmdSSHD,
			"registry":    cmdRegistry,
			"dockerd":     cmdDockerd,
			"stopdockerd": cmdStopDockerd,
			"rootless":    cmdRootless,
			"interrupt":   cmdInterrupt,
		},
	}
}

// buildEngine builds the engine (git-apex-engine, for serve and mcp)
// once, into a directory the scripts find it in on PATH.
var buildEngine = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "apex-engine-")
	if err != nil {
		return "", err
	}
	out, err := exec.Command("go", "build", "-tags", "engine", "-o", filepath.Join(dir, engineName), ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -tags engine: %v\n%s", err, out)
	}
	return dir, nil
})

// canMount says whether this process may bind-mount (root, with the
// privilege to mount).
var canMount = sync.OnceValue(func() bool {
	if os.Getuid() != 0 {
		return false
	}
	dir, err := os.MkdirTemp("", "apex-mount-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	if exec.Command("mount", "--bind", dir, dir).Run() != nil {
		return false
	}
	exec.Command("umount", dir).Run()
	return true
})

// cmdRedact writes the last command's stdout to FILE with the scenario's
// directory written as $WORK and port blocks as PORT, so that `cmp FILE $WORK/golden` compares
// outputs that name paths, and -update rewrites the golden file:
//
//	redact list.out
func cmdRedact(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: redact FILE")
	}
	out := ts.ReadFile("stdout")
	work := ts.Getenv("WORK")
	if real, err := filepath.EvalSymlinks(work); err == nil && real != work {
		out = strings.ReplaceAll(out, real, "$WORK")
	}
	out = strings.ReplaceAll(out, work, "$WORK")
	// An env's port block is free on the host when picked: which one
	// depends on what else runs.
	out = regexp.MustCompile(`"port": "[0-9]+"`).ReplaceAllString(out, `"port": "PORT"`)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(out), 0o644))
}

// cmdReadOnlyView mounts dir read-only at target (a bind mount, so root
// cannot write there either) until the script ends:
//
//	rocopy repo ro
func cmdReadOnlyView(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rocopy DIR TARGET")
	}
	dir, target := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(target, 0o755))
	ts.Check(exec.Command("mount", "--bind", dir, target).Run())
	ts.Defer(func() { exec.Command("umount", target).Run() })
	ts.Check(exec.Command("mount", "-o", "remount,bind,ro", target).Run())
}

// cmdSQL runs one SQL statement on an SQLite database file:
//
//	sql .git/apex/state.db 'PRAGMA user_version = 99'
func cmdSQL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sql FILE STATEMENT")
	}
	db, err := sql.Open("sqlite3", ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(args[1])
	ts.Check(err)
}

// cmdSQLFile runs the SQL in a file (for statements built by the script):
//
//	sqlfile .git/apex/state.db $WORK/update.sql
func cmdSQLFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlfile DB FILE")
	}
	cmdSQL(ts, false, []string{args[0], ts.ReadFile(args[1])})
}

// heldDBs are the write transactions holddb holds, by script directory.
var heldDBs sync.Map

// cmdHoldDB takes the write lock of an SQLite database (relative to the
// current directory) and holds it, as another process would, until
// releasedb:
//
//	holddb .git/apex/state.db
func cmdHoldDB(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: holddb FILE")
	}
	db, err := sql.Open("sqlite3", "file:"+ts.MkAbs(args[0])+"?_txlock=immediate")
	ts.Check(err)
	tx, err := db.Begin()
	ts.Check(err)
	_, err = tx.Exec("DELETE FROM events WHERE 0")
	ts.Check(err)
	heldDBs.Store(ts.Getenv("WORK"), func() { tx.Rollback(); db.Close() })
}

// cmdReleaseDB ends what holddb holds.
func cmdReleaseDB(ts *testscript.TestScript, neg bool, args []string) {
	if release, ok := heldDBs.LoadAndDelete(ts.Getenv("WORK")); ok {
		release.(func())()
	}
}

// cmdExits runs a command and fails unless it exits with the given code:
//
//	exits 3 git-apex remove feature-x
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("exits: %v", err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func setupScript(env *testscript.Env, engine *testEngine) error {
	home := filepath.Join(env.WorkDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	engineDir, err := buildEngine()
	if err != nil {
		return err
	}
	env.Setenv("PATH", engineDir+string(os.PathListSeparator)+env.Getenv("PATH"))
	if engine.host != "" {
		env.Setenv("DOCKER_HOST", engine.host)
	}
	env.Defer(func() { engine.removeContainers(env.WorkDir) })
	for k, v := range map[string]string{
		"HOME":                home,
		"XDG_CONFIG_HOME":     filepath.Join(home, ".config"),
		"XDG_STATE_HOME":      filepath.Join(home, ".local", "state"),
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME":     "Apex Tester",
		"GIT_AUTHOR_EMAIL":    "tester@example.com",
		"GIT_AUTHOR_DATE":     "2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME":  "Apex Tester",
		"GIT_COMMITTER_EMAIL": "tester@example.com",
		"GIT_COMMITTER_DATE":  "2026-01-01T00:00:00Z",
		"GIT_CONFIG_COUNT":    "2",
		"GIT_CONFIG_KEY_0":    "init.defaultBranch",
		"GIT_CONFIG_VALUE_0":  "main",
		"GIT_CONFIG_KEY_1":    "advice.detachedHead",
		"GIT_CONFIG_VALUE_1":  "false",
	} {
		env.Setenv(k, v)
	}
	return nil
}

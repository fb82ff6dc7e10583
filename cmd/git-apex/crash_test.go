package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// crashPoints is how many moments crash kills a command at, spread
// evenly from its start to a little past the time it takes whole.
const crashPoints = 24

// crashOps are the operations crash kills: what prepares each round, and
// the command killed; points, when set, instead of crashPoints (for a
// slow operation).
var crashOps = map[string]struct {
	prepare, run [][]string
	points       int
}{
	"start":  {run: [][]string{{"git-apex", "start", "feature", "c"}}},
	"remove": {prepare: [][]string{{"git-apex", "start", "feature", "c"}}, run: [][]string{{"git-apex", "remove", "--delete-branch", "feature-c"}}},
	"gc": {prepare: [][]string{{"git-apex", "start", "feature", "c"}, {"sh", "-c", "echo c > ../repo.worktrees/feature-c/c.txt && git -C ../repo.worktrees/feature-c add c.txt && git -C ../repo.worktrees/feature-c commit -q -m c && GIT_APEX_SKIP_HOOKS=1 git merge -q --ff-only c"}},
		run: [][]string{{"git-apex", "gc", "--merged"}}},
	"warm":   {run: [][]string{{"git-apex", "pool", "warm", "--size", "2"}}},
	"pooled": {prepare: [][]string{{"git-apex", "pool", "warm", "--size", "1"}}, run: [][]string{{"git-apex", "start", "feature", "c"}}},
	// Needs a policy with [container].image, and an engine.
	"containers": {run: [][]string{{"git-apex", "pool", "warm", "--containers", "2"}}, points: 10},
}

// cmdCrash kills an operation's process group with SIGKILL at each of
// crashDelays, runs `git apex doctor --fix` after each kill, and checks
// that nothing is left that no record explains: every worktree is the
// main checkout, a live env's or a pool slot's; no branch but main and
// live envs' (and, for gc, the merged branch); no git lock file, intent,
// stray pool directory or sandbox but a warm container's, no container
// labelled for the repository but the warm ones recorded; and the
// untracked file precious.txt in the main checkout is untouched. Run it in the main checkout:
//
//	crash start
func cmdCrash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: crash start|remove|gc|warm|pooled|containers")
	}
	op, ok := crashOps[args[0]]
	if !ok {
		ts.Fatalf("crash: unknown operation %q", args[0])
	}
	dir := ts.MkAbs(".")
	env := scriptEnv(ts)
	run := func(argv []string) (string, error) {
		// Not a timing test: the limit only turns a hang (a lock waiting
		// on itself, say) into a failure instead of a stuck test.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	mustRun := func(argv ...string) string {
		out, err := run(argv)
		if err != nil {
			ts.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return out
	}
	base := strings.TrimSpace(mustRun("git", "rev-parse", "main"))
	reset := func() {
		run([]string{"git-apex", "remove", "--force", "--delete-branch", "feature-c"})
		mustRun("git-apex", "pool", "drain")
		mustRun("git", "reset", "-q", "--hard", base)
		run([]string{"git", "branch", "-q", "-D", "c"})
	}
	// How long the operation takes here, whole: the kills are spread
	// over it, whatever the machine's speed.
	for _, argv := range op.prepare {
		mustRun(argv...)
	}
	began := time.Now()
	for _, argv := range op.run {
		mustRun(argv...)
	}
	whole := time.Since(began)
	reset()
	fixes, points := 0, crashPoints
	if op.points > 0 {
		points = op.points
	}
	for i := range points {
		delay := whole * time.Duration(i) * 5 / (4 * time.Duration(points))
		for _, argv := range op.prepare {
			mustRun(argv...)
		}
		for _, argv := range op.run {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = dir, env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			ts.Check(cmd.Start())
			time.Sleep(delay)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
		out, err := run([]string{"git-apex", "doctor", "--fix"})
		if err != nil {
			ts.Fatalf("killed %s after %v: doctor --fix left problems: %v\n%s", args[0], delay, err, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "fixed") {
				fixes++
				ts.Logf("killed %s after %v; doctor %s", args[0], delay.Round(time.Millisecond), strings.Join(strings.Fields(line), " "))
			}
		}
		if problems := crashLeftovers(dir, mustRun, args[0]); len(problems) > 0 {
			ts.Fatalf("killed %s after %v, then doctor --fix:\n%s", args[0], delay, strings.Join(problems, "\n"))
		}
		reset() // the next round starts from the same place
	}
	ts.Logf("%s takes %v whole; %d kills over it, after which doctor cleared %d leftovers", args[0], whole.Round(time.Millisecond), points, fixes)
}

// crashLeftovers lists what is left that no record explains.
func crashLeftovers(dir string, run func(...string) string, op string) []string {
	var problems []string
	var envs []struct{ Path, Branch string }
	json.Unmarshal([]byte(run("git-apex", "list", "--json")), &envs)
	var report struct {
		Slots []struct {
			Path          string
			WarmContainer string `json:"warm_container"`
		}
	}
	json.Unmarshal([]byte(run("git-apex", "pool", "status", "--json")), &report)
	slots := report.Slots
	known := map[string]bool{dir: true}
	branches := map[string]bool{"main": true}
	if op == "gc" {
		branches["c"] = true
	}
	for _, e := range envs {
		known[e.Path] = true
		branches[e.Branch] = true
	}
	for _, s := range slots {
		known[s.Path] = true
	}
	for _, line := range strings.Split(run("git", "worktree", "list", "--porcelain"), "\n") {
		if path, ok := strings.CutPrefix(line, "worktree "); ok && !known[path] {
			problems = append(problems, "worktree no record explains: "+path)
		}
	}
	for _, b := range strings.Fields(run("git", "for-each-ref", "--format=%(refname:short)", "refs/heads/")) {
		if !branches[b] {
			problems = append(problems, "branch no record explains: "+b)
		}
	}
	filepath.WalkDir(filepath.Join(dir, ".git"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".lock") || strings.HasSuffix(path, "packed-refs.new")) && filepath.Base(path) != "repo.lock" && filepath.Base(path) != "pool-warm.lock" { // flocks, kept
			problems = append(problems, "lock file left: "+path)
		}
		return nil
	})
	warm := map[string]bool{} // the warm containers' ids and sandboxes' name endings
	for _, s := range slots {
		if s.WarmContainer != "" {
			warm[s.WarmContainer], warm["-pool-"+filepath.Base(s.Path)] = true, true
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git", "apex", "intents")); len(entries) > 0 {
		problems = append(problems, fmt.Sprintf("%s left in apex/intents", entries[0].Name()))
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".git", "apex", "sandbox"))
	for _, e := range entries {
		if _, ending, ok := strings.Cut(e.Name(), "-pool-"); !ok || !warm["-pool-"+ending] {
			problems = append(problems, fmt.Sprintf("%s left in apex/sandbox", e.Name()))
		}
	}
	if op == "containers" {
		for _, id := range strings.Fields(run("docker", "ps", "-aq", "--no-trunc", "--filter", "label=git-apex.repo="+filepath.Join(dir, ".git"))) {
			if !warm[id] {
				problems = append(problems, "a container no record explains: "+id)
			}
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git", "apex", "pool")); len(entries) != len(slots) {
		problems = append(problems, fmt.Sprintf("apex/pool holds %d entries for %d slots", len(entries), len(slots)))
	}
	if data, err := os.ReadFile(filepath.Join(dir, "precious.txt")); err != nil || string(data) != "mine\n" {
		problems = append(problems, "precious.txt was lost or changed")
	}
	return problems
}

// scriptEnv is the environment the script's exec commands get.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "GIT_CONFIG_NOSYSTEM",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_KEY_1", "GIT_CONFIG_VALUE_1", "DOCKER_HOST"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

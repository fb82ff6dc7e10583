package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// crashPoints is how many moments crash kills a command at, spread
// evenly from its start to a little past the time it takes whole.
const crashPoints = 24

// crashWork is the uncommitted work crash plants in an env before it
// kills a command that discards or keeps the env: an edited tracked
// file, a staged new file and an untracked one.
const crashWork = "echo mine > $W/d1/f1 && echo staged > $W/staged.txt && git -C $W add staged.txt && echo loose > $W/loose.txt"

// crashOps are the operations crash kills: what prepares each round, the
// command killed, and the envs prepare plants crashWork in (which, after
// the kill and doctor --fix, must be live with that work or give it back
// through `git apex restore`); points, when set, instead of crashPoints
// (for a slow operation).
var crashOps = map[string]struct {
	prepare, run [][]string
	planted      []string
	points       int
}{
	"start": {run: [][]string{{"git-apex", "start", "feature", "c"}}},
	"remove": {prepare: [][]string{{"git-apex", "start", "feature", "c"}, {"sh", "-c", "W=../repo.worktrees/feature-c && " + crashWork}},
		run: [][]string{{"git-apex", "remove", "--force", "--delete-branch", "feature-c"}}, planted: []string{"feature-c"}},
	// c, merged and clean, goes; d, merged with work in it, stays.
	"gc": {prepare: [][]string{{"git-apex", "start", "feature", "c"}, {"git-apex", "start", "feature", "d"},
		{"sh", "-c", "for b in c d; do W=../repo.worktrees/feature-$b; echo $b > $W/$b.txt && git -C $W add $b.txt && git -C $W commit -q -m $b || exit 1; done && " +
			"GIT_APEX_SKIP_HOOKS=1 git merge -q --no-edit c d && W=../repo.worktrees/feature-d && " + crashWork}},
		run: [][]string{{"git-apex", "gc", "--merged"}}, planted: []string{"feature-d"}},
	// c's work goes to the trash (its branch deleted); restore brings it back.
	"restore": {prepare: [][]string{{"git-apex", "start", "feature", "c"}, {"sh", "-c", "W=../repo.worktrees/feature-c && " + crashWork},
		{"git-apex", "remove", "--force", "--delete-branch", "feature-c"}},
		run: [][]string{{"git-apex", "restore", "feature-c"}}, planted: []string{"feature-c"}},
	// Switches the main checkout to branch old, which the scenario makes
	// differ from main in many files (crash_shared.txtar).
	"shared": {prepare: [][]string{{"git", "branch", "-f", "old", "main~1"}},
		run: [][]string{{"git-apex", "start", "--isolation", "shared", "--branch", "old", "feature", "sh"}}},
	"warm":   {run: [][]string{{"git-apex", "pool", "warm", "--size", "2"}}},
	"pooled": {prepare: [][]string{{"git-apex", "pool", "warm", "--size", "1"}}, run: [][]string{{"git-apex", "start", "feature", "c"}}},
	// Needs $WORK/tasks.toml.
	"batch": {run: [][]string{{"git-apex", "batch", "-j", "2", "--isolation", "worktree", "--results", "/dev/null", "../tasks.toml"}}},
	// Needs a policy with [container].image, and an engine.
	"containers": {run: [][]string{{"git-apex", "pool", "warm", "--containers", "2"}}, points: 10},
}

// cmdCrash kills an operation's process group (git-apex and the gits it
// runs) with SIGKILL at crashPoints moments spread over the time the
// operation takes whole here, and after each kill runs `git apex doctor
// --fix` while the killed git-apex is not yet reaped (as when its parent
// died with it, and init has not got to it). It then checks that doctor
// --fix exited 0 and a plain doctor does too, and that nothing is left
// that no record explains: every worktree is the main checkout, a live
// env's or a pool slot's, none locked; every directory under the
// environment root a live env's; no branch but main and live envs' (and,
// for gc, the merged branches); no git lock file, intent, stray pool
// directory or sandbox but a warm container's, no container labelled for
// the repository but the warm ones recorded; the untracked file
// precious.txt in the main checkout is untouched; and the work planted
// in the op's envs is where it was or comes back with `git apex
// restore`. Run it in the main checkout:
//
//	crash start
func cmdCrash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: crash start|remove|restore|gc|shared|warm|pooled|batch|containers")
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
	// reset puts the repository back as it was before the round: no env,
	// no pool, no branch but main, nothing in the trash.
	reset := func() {
		mustRun("git", "checkout", "-q", "-f", "main") // a shared env's start switched it
		var envs []struct{ Identity string }
		json.Unmarshal([]byte(mustRun("git-apex", "list", "--json")), &envs)
		for _, e := range envs {
			mustRun("git-apex", "remove", "--force", "--delete-branch", e.Identity)
		}
		mustRun("git-apex", "pool", "drain")
		mustRun("git", "reset", "-q", "--hard", base)
		mustRun("sh", "-c", "git for-each-ref --format='delete %(refname)' refs/apex/trash refs/heads | grep -v ' refs/heads/main$' | git update-ref --stdin")
	}
	// How long the operation takes here, whole, the faster of two runs:
	// the kills are spread over it, whatever the machine's speed.
	var whole time.Duration
	for range 2 {
		for _, argv := range op.prepare {
			mustRun(argv...)
		}
		began := time.Now()
		for _, argv := range op.run {
			mustRun(argv...)
		}
		if took := time.Since(began); whole == 0 || took < whole {
			whole = took
		}
		reset()
	}
	fixes, points := 0, crashPoints
	if op.points > 0 {
		points = op.points
	}
	for i := range points {
		delay := whole * time.Duration(i) * 5 / (4 * time.Duration(points))
		for _, argv := range op.prepare {
			mustRun(argv...)
		}
		var killed []*exec.Cmd
		for _, argv := range op.run {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = dir, env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			ts.Check(cmd.Start())
			time.Sleep(delay)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			killed = append(killed, cmd)
		}
		crashWaitUnused(ts, dir, args[0] == "shared")
		out, err := run([]string{"git-apex", "doctor", "--fix"})
		for _, cmd := range killed {
			cmd.Wait() // reaped only now
		}
		if err != nil {
			ts.Fatalf("killed %s after %v: doctor --fix left problems: %v\n%s", args[0], delay, err, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "fixed") {
				fixes++
				ts.Logf("killed %s after %v; doctor %s", args[0], delay.Round(time.Millisecond), strings.Join(strings.Fields(line), " "))
			}
		}
		if out, err := run([]string{"git-apex", "doctor"}); err != nil {
			ts.Fatalf("killed %s after %v, then doctor --fix: doctor still finds problems: %v\n%s", args[0], delay, err, out)
		}
		problems := crashLeftovers(dir, mustRun, args[0])
		problems = append(problems, crashWorkKept(dir, run, op.planted, args[0] == "restore")...)
		if len(problems) > 0 {
			ts.Fatalf("killed %s after %v, then doctor --fix:\n%s", args[0], delay, strings.Join(problems, "\n"))
		}
		reset() // the next round starts from the same place
	}
	ts.Logf("%s takes %v whole; %d kills over it, after which doctor cleared %d leftovers", args[0], whole.Round(time.Millisecond), points, fixes)
}

// crashWaitUnused waits until no process of this session (a container's
// are not) has its working directory in a worktree of the repository at
// dir but the main checkout (that too with main): a batch's tasks run in
// process groups of their own, which a kill of git-apex's group does not
// reach, and end by themselves; a killed git may take a moment to exit.
func crashWaitUnused(ts *testscript.TestScript, dir string, main bool) {
	session, _ := unix.Getsid(0)
	for range 600 {
		used := false
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
			if err != nil || cwd == dir && !main || cwd != dir && !strings.HasPrefix(cwd, dir+".worktrees/") && !strings.HasPrefix(cwd, filepath.Join(dir, ".git")+"/") {
				continue
			}
			stat, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
			if _, after, ok := bytes.Cut(stat, []byte(") ")); ok {
				if fields := strings.Fields(string(after)); len(fields) > 3 && fields[3] == strconv.Itoa(session) {
					used = true
				}
			}
		}
		if !used {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("crash: processes still work in the repository's worktrees after a minute")
}

// crashWorkKept checks that the crashWork planted in each of envs is
// still in its worktree, or, when the env is gone, that `git apex
// restore` brings it back, staged state included; and that the trash
// holds no entry of such an env with less than that work (a partial
// one, which restore would take before the whole). With restored (the
// killed op was a restore), a live env must have its entry dropped:
// restore drops it once the env is whole, and doctor finishes that.
func crashWorkKept(dir string, run func([]string) (string, error), envs []string, restored bool) []string {
	var problems []string
	for _, identity := range envs {
		wt := filepath.Join(dir+".worktrees", identity)
		out, _ := run([]string{"git-apex", "list", "--json"})
		live := strings.Contains(out, `"identity": "`+identity+`"`)
		list, _ := run([]string{"git-apex", "restore", "--list", "--json"})
		var entries []struct {
			Identity string
			Files    int
		}
		json.Unmarshal([]byte(list), &entries)
		for _, e := range entries {
			switch {
			case e.Identity != identity:
			case e.Files != 3:
				problems = append(problems, fmt.Sprintf("%s: the trash holds an entry of %d files, not the 3 planted:\n%s", identity, e.Files, list))
			case live && restored:
				problems = append(problems, fmt.Sprintf("%s is live again, and its trash entry is still there:\n%s", identity, list))
			}
		}
		if !live {
			if out, err := run([]string{"git-apex", "restore", identity}); err != nil {
				problems = append(problems, fmt.Sprintf("%s is gone, and `git apex restore %s` fails: %v\n%s", identity, identity, err, out))
				continue
			}
		}
		for file, want := range map[string]string{"d1/f1": "mine\n", "staged.txt": "staged\n", "loose.txt": "loose\n"} {
			if data, err := os.ReadFile(filepath.Join(wt, file)); err != nil || string(data) != want {
				problems = append(problems, fmt.Sprintf("%s: %s was lost or changed (%q, %v)", identity, file, data, err))
			}
		}
		if out, err := run([]string{"git", "-C", wt, "diff", "--cached", "--name-only"}); err != nil || strings.TrimSpace(out) != "staged.txt" {
			problems = append(problems, fmt.Sprintf("%s: the index stages %q, not staged.txt (%v)", identity, out, err))
		}
	}
	return problems
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
	switch op {
	case "gc":
		branches["c"], branches["d"] = true, true
	case "shared":
		branches["old"] = true
		problems = append(problems, crashSharedCheckout(dir, run, envs)...)
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
		if strings.HasPrefix(line, "locked") {
			problems = append(problems, "a worktree is still "+line)
		}
	}
	entries, _ := os.ReadDir(dir + ".worktrees")
	for _, e := range entries {
		if path := filepath.Join(dir+".worktrees", e.Name()); !known[path] {
			problems = append(problems, "a directory under the environment root no record explains: "+path)
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
	sandboxes, _ := os.ReadDir(filepath.Join(dir, ".git", "apex", "sandbox"))
	for _, e := range sandboxes {
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

// crashSharedCheckout checks the main checkout after a shared start was
// killed and doctor fixed what it left: on the env's branch when the env
// is recorded, else on main, with nothing changed but the untracked
// precious.txt.
func crashSharedCheckout(dir string, run func(...string) string, envs []struct{ Path, Branch string }) []string {
	var problems []string
	want := "main"
	for _, e := range envs {
		if e.Path == dir {
			want = e.Branch
		}
	}
	if got := strings.TrimSpace(run("git", "branch", "--show-current")); got != want {
		problems = append(problems, fmt.Sprintf("the main checkout is on %q, not %q", got, want))
	}
	if st := run("git", "status", "--porcelain"); st != "?? precious.txt\n" {
		problems = append(problems, "the main checkout has changes no one made:\n"+st)
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

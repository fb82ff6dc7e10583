package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-apex/git-apex/gitx/gittest"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
)

// repoWithFiles makes a repository with n tracked files.
func repoWithFiles(t *testing.T, n int) string {
	dir := gittest.NewRepo(t)
	for i := range n {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte("original\n"), 0o644)
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "files")
	return dir
}

func open(t *testing.T, dir string) *repo.Repo {
	t.Helper()
	m, err := repo.Open(context.Background(), dir, repo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func run(t *testing.T, m *repo.Repo, tasks []Task, n int) ([]Result, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := Run(context.Background(), m, tasks, Options{Parallelism: n, Isolation: "worktree", Results: &out,
		Progress: io.Discard, LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

// checkSlotsClean checks that every pool slot is idle, at its pool
// commit, with nothing uncommitted, untracked or ignored.
func checkSlotsClean(t *testing.T, m *repo.Repo) {
	t.Helper()
	slots, _, err := pool.New(m).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if s.Leased() {
			t.Errorf("slot %s still leased", s.Path)
		}
		if out := gittest.Git(t, s.Path, "status", "--porcelain", "--ignored"); out != "" {
			t.Errorf("slot %s not clean:\n%s", s.Path, out)
		}
		if head := gittest.Git(t, s.Path, "rev-parse", "HEAD"); head != s.PoolCommit {
			t.Errorf("slot %s at %s, not its pool commit %s", s.Path, head, s.PoolCommit)
		}
	}
}

// TestParallelTasksOverlapAndDoNotSeeEachOther proves overlap with a
// barrier, not with timing: each task writes its file, checks in, and
// waits until all three have checked in, which only tasks running at once
// can do (a lone task gives up after a minute and fails). After the
// barrier each still finds its own file: the slots are apart.
func TestParallelTasksOverlapAndDoNotSeeEachOther(t *testing.T) {
	m := open(t, repoWithFiles(t, 3))
	barrier := t.TempDir()
	var tasks []Task
	for _, id := range []string{"a", "b", "c"} {
		tasks = append(tasks, Task{ID: id, Run: []string{"sh", "-c",
			"test ! -e shared.txt && echo " + id + " > shared.txt && touch " + barrier + "/" + id + " && " +
				"n=0; while [ \"$(ls " + barrier + " | wc -l)\" -lt 3 ]; do n=$((n+1)); [ $n -lt 1200 ] || exit 9; sleep 0.05; done; " +
				"test \"$(cat shared.txt)\" = " + id}})
	}
	res, lines := run(t, m, tasks, 3)
	if len(res) != 3 || strings.Count(lines, "\n") != 3 {
		t.Fatalf("results %+v\n%s", res, lines)
	}
	for _, r := range res {
		if r.Status != "passed" {
			t.Errorf("task %s: %s, exit %d (9: it waited alone at the barrier; see %s)", r.ID, r.Status, r.ExitCode, r.Log)
		}
	}
	checkSlotsClean(t, m)
}

func TestTenTasksTwoSlotsAndHeavyChangesLeaveCleanSlots(t *testing.T) {
	m := open(t, repoWithFiles(t, 100))
	var tasks []Task
	for i := range 10 {
		// Modify every tracked file, add 100 untracked and an ignored one.
		tasks = append(tasks, Task{ID: fmt.Sprintf("t%d", i), Files: map[string]string{".gitignore": "*.log\n"},
			Run: []string{"sh", "-c", "for f in f*.txt; do echo changed > $f; echo new > new-$f; done; echo x > build.log"}})
	}
	res, _ := run(t, m, tasks, 2)
	slots := map[string]bool{}
	for _, r := range res {
		if r.Status != "passed" {
			t.Errorf("task %s: %s", r.ID, r.Status)
		}
		slots[r.Slot] = true
	}
	if len(res) != 10 || len(slots) > 2 {
		t.Errorf("%d results in %d slots, want 10 in at most 2", len(res), len(slots))
	}
	checkSlotsClean(t, m)
}

func TestOtherRepositoryUsesOneCachedBareClone(t *testing.T) {
	m := open(t, repoWithFiles(t, 1))
	other := repoWithFiles(t, 2)
	gittest.Git(t, other, "commit", "-q", "--allow-empty", "-m", "other repo marker")
	url := "file://" + other
	tasks := []Task{
		{ID: "one", Repo: url, Run: []string{"sh", "-c", "git log -1 --format=%s | grep -q 'other repo marker'"}},
		{ID: "two", Repo: url, Run: []string{"test", "-e", "f001.txt"}},
	}
	res, _ := run(t, m, tasks, 1)
	for _, r := range res {
		if r.Status != "passed" {
			log, _ := os.ReadFile(r.Log)
			t.Errorf("task %s: %s: %s\n%s", r.ID, r.Status, r.Error, log)
		}
	}
	clones, _ := filepath.Glob(filepath.Join(m.Git.ApexDir(), "repos", "*.git"))
	if len(clones) != 1 {
		t.Fatalf("cached clones: %v", clones)
	}
	if out := gittest.Git(t, clones[0], "rev-parse", "--is-bare-repository"); out != "true" {
		t.Errorf("the cache is not a bare clone")
	}
	// A second batch reuses it.
	run(t, m, tasks[:1], 1)
	if again, _ := filepath.Glob(filepath.Join(m.Git.ApexDir(), "repos", "*.git")); len(again) != 1 {
		t.Errorf("clones after a second batch: %v", again)
	}
}

func TestTasksFileIsStrict(t *testing.T) {
	for text, want := range map[string]string{
		"[[task]]\nid = \"a\"\nrun = [\"true\"]\nrunn = 1\n":                    `unknown key "task.runn"`,
		"[[task]]\nid = \"a/b\"\nrun = [\"true\"]\n":                            "id must be a valid name",
		"[[task]]\nid = \"a\"\n":                                                "no run command",
		"[[task]]\nid = \"a\"\nrun = [\"true\"]\nfiles = { \"../x\" = \"\" }\n": "must stay inside",
	} {
		path := filepath.Join(t.TempDir(), "tasks.toml")
		os.WriteFile(path, []byte(text), 0o644)
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// buildApex builds the git-apex binary for the signal tests.
func buildApex(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "git-apex")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/git-apex").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startBatch starts `git-apex batch` on slow tasks and waits until
// `started` of them are running.
func startBatch(t *testing.T, bin, dir string, started int) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	tasks := "[[task]]\nid = \"quick\"\nrun = [\"true\"]\n"
	for i := range 3 {
		tasks += fmt.Sprintf("[[task]]\nid = \"slow%d\"\nrun = [\"sh\", \"-c\", \"touch started-$APEX_ID; sleep 60\"]\n", i)
	}
	file := filepath.Join(t.TempDir(), "tasks.toml")
	os.WriteFile(file, []byte(tasks), 0o644)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	cmd := exec.Command(bin, "batch", "--parallelism", "2", "--results", results, file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, _ := filepath.Glob(filepath.Join(dir, ".git", "apex", "pool", "*", "started-*"))
		if len(n) >= started {
			return cmd, &stderr, results
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("tasks did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestInterruptStopsTasksWritesResultsAndExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-apex")
	}
	bin := buildApex(t)
	dir := repoWithFiles(t, 3)
	cmd, stderr, results := startBatch(t, bin, dir, 2)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit code %d (%v), want 130\n%s", code, err, stderr)
	}
	data, _ := os.ReadFile(results)
	sc := bufio.NewScanner(bytes.NewReader(data))
	var got []string
	for sc.Scan() {
		var r Result
		json.Unmarshal(sc.Bytes(), &r)
		got = append(got, r.ID+" "+r.Status)
	}
	// One line for each task: the one that finished, the two stopped, the
	// one never started.
	slices.Sort(got)
	if want := "quick passed,slow0 interrupted,slow1 interrupted,slow2 skipped"; strings.Join(got, ",") != want {
		t.Errorf("results %v, want %s", got, want)
	}
	if out := gittest.Git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(out, "locked") || strings.Count(out, "worktree ") > 3 {
		t.Errorf("worktrees after the interrupt:\n%s", out)
	}
	checkSlotsClean(t, open(t, dir))
}

func TestKilledBatchLeasesAreReclaimed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-apex")
	}
	bin := buildApex(t)
	dir := repoWithFiles(t, 3)
	cmd, _, _ := startBatch(t, bin, dir, 2)
	cmd.Process.Kill()
	cmd.Wait()
	status := exec.Command(bin, "pool", "status", "--json")
	status.Dir = dir
	out, err := status.Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `"status": "leased"`) {
		t.Errorf("leases of the killed batch remain:\n%s", out)
	}
	m := open(t, dir)
	checkSlotsClean(t, m)
	slots, _, _ := pool.New(m).Status(context.Background())
	wts := gittest.Git(t, dir, "worktree", "list", "--porcelain")
	if strings.Count(wts, "worktree ") != len(slots)+1 {
		t.Errorf("%d slots but worktrees:\n%s", len(slots), wts)
	}
}

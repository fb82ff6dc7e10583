package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the results: an operation at one size.
type row struct {
	Op          string  `json:"op"`
	Files       int     `json:"files"`
	Baseline    string  `json:"baseline"`
	Pairs       int     `json:"pairs"`
	ApexMs      float64 `json:"apex_median_ms"`
	BaseMs      float64 `json:"baseline_median_ms"`
	OverheadMs  float64 `json:"overhead_median_ms"` // median of per-pair (git-apex - baseline)
	Ratio       float64 `json:"ratio_median"`       // median of per-pair git-apex / baseline
	RatioMin    float64 `json:"ratio_min"`
	RatioMax    float64 `json:"ratio_max"`
	Load        string  `json:"load"` // the machine's load average as the row was measured
	ApexSamples []int64 `json:"apex_samples_us"`
	BaseSamples []int64 `json:"baseline_samples_us"`
}

// result is a whole run, as written to bench/results/<date>.json.
type result struct {
	Date    string `json:"date"`
	Machine struct {
		Cores int    `json:"cores"`
		Git   string `json:"git"`
		Go    string `json:"go"`
	} `json:"machine"`
	// LoadBefore and LoadAfter are /proc/loadavg's 1, 5 and 15 minute
	// figures as the run began and ended: a busy machine skews it.
	LoadBefore string      `json:"load_before"`
	LoadAfter  string      `json:"load_after"`
	Rows       []row       `json:"rows"`
	Healthz    *loadResult `json:"healthz_load,omitempty"`
}

// loadAverage is the machine's load average, "" where /proc has none.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	fields := strings.Fields(string(data))
	if err != nil || len(fields) < 3 {
		return ""
	}
	return strings.Join(fields[:3], " ")
}

// batchSize is the size the batch row runs at: the largest up to 10k
// files (at 100k its baseline alone takes minutes a run), else the first.
func batchSize(sizes []int) int {
	at := sizes[0]
	for _, n := range sizes {
		if n <= 10000 && (n > at || at > 10000) {
			at = n
		}
	}
	return at
}

// run measures every row, prints the table to out and writes the JSON.
func run(cfg config, out io.Writer) (*result, error) {
	res := &result{Date: time.Now().UTC().Format(time.RFC3339), LoadBefore: loadAverage()}
	res.Machine.Cores = runtime.NumCPU()
	res.Machine.Go = runtime.Version()
	if v, err := exec.Command("git", "--version").Output(); err == nil {
		res.Machine.Git = strings.TrimSpace(strings.TrimPrefix(string(v), "git version"))
	}
	for i, size := range cfg.sizes {
		repo, err := cachedRepo(cfg.cacheDir, size)
		if err != nil {
			return nil, err
		}
		b, err := newBench(cfg, repo, size)
		if err != nil {
			return nil, err
		}
		rows, load, err := b.rows(i == 0, size == batchSize(cfg.sizes))
		if load != nil {
			res.Healthz = load
		}
		if cerr := b.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, rows...)
	}
	for _, size := range cfg.slotSizes {
		rows, err := slotRowsAt(cfg, size)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, rows...)
	}
	res.LoadAfter = loadAverage()
	printTable(out, res)
	if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
		return nil, err
	}
	name := filepath.Join(cfg.outDir, strings.ReplaceAll(res.Date, ":", "-")+".json")
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\nresults written to %s\n", name)
	return res, os.WriteFile(name, data, 0o644)
}

// slotRowsAt measures the batch task acquire_ms and reset_ms rows on the
// cached repository of size files.
func slotRowsAt(cfg config, size int) ([]row, error) {
	repo, err := cachedRepo(cfg.cacheDir, size)
	if err != nil {
		return nil, err
	}
	b, err := newBench(cfg, repo, size)
	if err != nil {
		return nil, err
	}
	rows, err := b.slotRows()
	if cerr := b.close(); err == nil {
		err = cerr
	}
	return rows, err
}

// bench measures on one cached repository. Envs and worktrees go in a
// temporary root, named by the policy file it passes in GIT_APEX_POLICY,
// and everything is removed again by close.
type bench struct {
	cfg   config
	repo  string
	files int
	root  string
	env   []string
	seq   int // makes names unique across runs
}

func newBench(cfg config, repo string, files int) (*bench, error) {
	b := &bench{cfg: cfg, repo: repo, files: files}
	if err := b.reset(); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "apex-bench-")
	if err != nil {
		return nil, err
	}
	b.root = root
	policy := filepath.Join(root, "policy.toml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf("[worktree]\nroot = %q\n", filepath.Join(root, "envs"))), 0o644); err != nil {
		return nil, err
	}
	// The policy puts environments in this temporary directory, outside
	// the repository's parent: it is approved once, in the bench's own
	// state directory.
	// The hooks run the git-apex on PATH: this one.
	path := filepath.Dir(cfg.apex) + string(os.PathListSeparator) + os.Getenv("PATH")
	b.env = append(os.Environ(), "GIT_APEX_POLICY="+policy, "XDG_STATE_HOME="+filepath.Join(root, "state"), "PATH="+path)
	return b, untimed(b.apex("trust"))
}

// reset returns the cached repository to its generated state: only the
// main checkout, only branch main, no git-apex state.
func (b *bench) reset() error {
	os.RemoveAll(filepath.Join(b.repo, ".git", "apex"))
	out, err := exec.Command("git", "-C", b.repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && p != b.repo {
			os.RemoveAll(p)
		}
	}
	if err := gitIn(b.repo, "worktree", "prune"); err != nil {
		return err
	}
	out, err = exec.Command("git", "-C", b.repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/").Output()
	if err != nil {
		return err
	}
	for _, br := range strings.Fields(string(out)) {
		if br != "main" {
			if err := gitIn(b.repo, "branch", "-D", br); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *bench) close() error {
	err := b.reset()
	os.RemoveAll(b.root)
	return err
}

// rows measures the operations for this size. A quick run measures
// start, --version, path and the hook and list with 100 envs at the first
// size and the pooled start at the others. Otherwise start, the pooled
// start and the hook (first count) run at every size, the merge with hooks
// at cfg.mergeFrom files or more, the batch at batchSize, and the rest
// (the other counts, remove, list, gc, full mode, the API, the floor) at
// the first.
func (b *bench) rows(first, batch bool) ([]row, *loadResult, error) {
	var rows []row
	var load *loadResult
	one := func(f func() (row, error)) func() error {
		return func() error {
			r, err := f()
			if err == nil {
				rows = append(rows, r)
			}
			return err
		}
	}
	many := func(f func() ([]row, error)) func() error {
		return func() error {
			rs, err := f()
			rows = append(rows, rs...)
			return err
		}
	}
	var steps []func() error
	hooks, lists := b.cfg.hookCounts, b.cfg.listCounts
	switch {
	case b.cfg.onlyEngines:
		steps = append(steps, many(b.engineRows))
	case b.cfg.quick && first:
		steps = append(steps, one(b.start), one(b.hookRow(hooks[0])), many(b.listRows(lists[0])), many(b.floor))
	case b.cfg.quick:
		steps = append(steps, one(b.pooledStart))
	default:
		steps = append(steps, one(b.start), one(b.pooledStart), one(b.hookRow(hooks[0])))
		if b.files >= b.cfg.mergeFrom {
			steps = append(steps, one(b.mergeWithHooks))
		}
		if batch {
			steps = append(steps, one(func() (row, error) { return b.batch(b.cfg.batchTasks, 4) }))
		}
		if !first {
			break
		}
		for _, n := range hooks[1:] {
			steps = append(steps, one(b.hookRow(n)))
		}
		steps = append(steps, one(b.remove))
		for _, n := range lists {
			steps = append(steps, many(b.listRows(n)))
		}
		if b.cfg.gcEnvs > 0 {
			steps = append(steps, one(func() (row, error) { return b.gc(b.cfg.gcEnvs) }))
		}
		steps = append(steps, many(b.fullRows), many(func() ([]row, error) {
			api, l, err := b.api(b.cfg.apiEnvs)
			load = l
			return api, err
		}), many(b.floor))
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	return rows, load, nil
}

func (b *bench) next(prefix string) string {
	b.seq++
	return fmt.Sprintf("%s%d", prefix, b.seq)
}

func (b *bench) apex(args ...string) *exec.Cmd {
	cmd := exec.Command(b.cfg.apex, args...)
	cmd.Dir, cmd.Env = b.repo, b.env
	return cmd
}

func (b *bench) git(args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = b.repo, b.env
	return cmd
}

// timed runs commands one after another and returns their total time.
func timed(cmds ...*exec.Cmd) (time.Duration, error) {
	start := time.Now()
	for _, cmd := range cmds {
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	return time.Since(start), nil
}

// untimed runs commands for setup or cleanup.
func untimed(cmds ...*exec.Cmd) error {
	_, err := timed(cmds...)
	return err
}

// plainAdd is the baseline of the start rows: one `git worktree add -b`,
// removed again untimed.
func (b *bench) plainAdd() (time.Duration, error) {
	name := b.next("g")
	path := filepath.Join(b.root, "envs", name)
	d, err := timed(b.git("worktree", "add", "-q", "-b", name, path))
	if err == nil {
		err = untimed(b.git("worktree", "remove", "--force", path), b.git("branch", "-D", name))
	}
	return d, err
}

func (b *bench) start() (row, error) {
	return b.measure("start", "git worktree add -b", b.apexStart, b.plainAdd)
}

// apexStart times one `git apex start` of a new env, removed again
// untimed.
func (b *bench) apexStart() (time.Duration, error) {
	id := b.next("s")
	d, err := timed(b.apex("start", "task", id))
	if err == nil {
		err = untimed(b.apex("remove", "--force", "--delete-branch", "task-"+id))
	}
	return d, err
}

func (b *bench) remove() (row, error) {
	return b.measure("remove", "git worktree remove + git branch -D",
		func() (time.Duration, error) {
			id := b.next("r")
			if err := untimed(b.apex("start", "task", id)); err != nil {
				return 0, err
			}
			return timed(b.apex("remove", "--delete-branch", "task-"+id))
		},
		func() (time.Duration, error) {
			name := b.next("g")
			path := filepath.Join(b.root, "envs", name)
			if err := untimed(b.git("worktree", "add", "-q", "-b", name, path)); err != nil {
				return 0, err
			}
			return timed(b.git("worktree", "remove", path), b.git("branch", "-D", name))
		})
}

// listRows measures `git apex list` with n envs against `git status
// --porcelain` run in each of the same worktrees in turn, and the
// completion of identities with them.
func (b *bench) listRows(n int) func() ([]row, error) {
	return func() ([]row, error) { return b.list(n) }
}

func (b *bench) list(n int) ([]row, error) {
	var ids, paths []string
	defer func() {
		for _, id := range ids {
			untimed(b.apex("remove", "--force", "--delete-branch", id))
		}
	}()
	for range n {
		id := "task-" + b.next("l")
		cmd := b.apex("start", id)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("start %s: %v", id, err)
		}
		ids = append(ids, id)
		paths = append(paths, strings.TrimSpace(string(out)))
	}
	// What a TAB after `git apex rm ` costs, against what git's own
	// completion runs for `git switch <TAB>`.
	complete, err := b.measure(fmt.Sprintf("complete identities (%d envs)", n), "git for-each-ref refs/heads/",
		func() (time.Duration, error) { return timed(b.apex("__complete", "--", "rm", "")) },
		func() (time.Duration, error) {
			return timed(b.git("for-each-ref", "--format=%(refname:short)", "refs/heads/"))
		})
	if err != nil {
		return nil, err
	}
	r, err := b.measure(fmt.Sprintf("list (%d envs)", n), fmt.Sprintf("%d x git status --porcelain", n),
		func() (time.Duration, error) { return timed(b.apex("list")) },
		func() (time.Duration, error) {
			var cmds []*exec.Cmd
			for _, p := range paths {
				cmds = append(cmds, b.git("-C", p, "status", "--porcelain"))
			}
			return timed(cmds...)
		})
	return []row{complete, r}, err
}

// floor measures the process floor: what a shell prompt or a hook pays.
// --version is measured against an empty Go program (cfg.empty), path
// against the git command that finds the same commit.
func (b *bench) floor() ([]row, error) {
	id := "task-" + b.next("f")
	if err := untimed(b.apex("start", id)); err != nil {
		return nil, err
	}
	defer untimed(b.apex("remove", "--force", "--delete-branch", id))
	var rows []row
	if b.cfg.empty != "" {
		version, err := b.measure("--version", "an empty Go program",
			func() (time.Duration, error) { return timed(b.apex("--version")) },
			func() (time.Duration, error) { return timed(exec.Command(b.cfg.empty)) })
		if err != nil {
			return nil, err
		}
		rows = append(rows, version)
	}
	path, err := b.measure("path", "git rev-parse HEAD",
		func() (time.Duration, error) { return timed(b.apex("path", id)) },
		func() (time.Duration, error) { return timed(b.git("rev-parse", "HEAD")) })
	return append(rows, path), err
}

// measure runs a warm-up pair, then cfg.pairs pairs of A (git-apex) and
// B (baseline) alternately, and summarizes them.
func (b *bench) measure(op, baseline string, a, base func() (time.Duration, error)) (row, error) {
	fmt.Fprintf(os.Stderr, "bench: %s, %d files\n", op, b.files)
	if _, err := a(); err != nil {
		return row{}, err
	}
	if _, err := base(); err != nil {
		return row{}, err
	}
	r := row{Op: op, Files: b.files, Baseline: baseline, Pairs: b.cfg.pairs, Load: loadAverage()}
	var as, bs, ratios, diffs []float64
	for i := range b.cfg.pairs {
		// The order alternates within pairs (A B, then B A), so that
		// whatever the first of a pair pays or leaves warm falls on each
		// side as often.
		var da, db time.Duration
		var err error
		if i%2 == 0 {
			if da, err = a(); err == nil {
				db, err = base()
			}
		} else {
			if db, err = base(); err == nil {
				da, err = a()
			}
		}
		if err != nil {
			return r, err
		}
		as, bs = append(as, ms(da)), append(bs, ms(db))
		ratios, diffs = append(ratios, ms(da)/ms(db)), append(diffs, ms(da)-ms(db))
		r.ApexSamples, r.BaseSamples = append(r.ApexSamples, da.Microseconds()), append(r.BaseSamples, db.Microseconds())
	}
	r.ApexMs, r.BaseMs, r.OverheadMs, r.Ratio = median(as), median(bs), median(diffs), median(ratios)
	sort.Float64s(ratios)
	r.RatioMin, r.RatioMax = ratios[0], ratios[len(ratios)-1]
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printTable(out io.Writer, res *result) {
	fmt.Fprintf(out, "git-apex benchmark, %s, %d cores, git %s, load average %s at the start and %s at the end\n\n",
		res.Date, res.Machine.Cores, res.Machine.Git, res.LoadBefore, res.LoadAfter)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "operation\tfiles\tgit-apex ms\tbaseline ms\toverhead ms\tratio\tmin-max\tload\t\tbaseline\t")
	for _, r := range res.Rows {
		load, _, _ := strings.Cut(r.Load, " ") // the last minute's
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%.1f\t%+.1f\t%.2f\t%.2f-%.2f\t%s\t\t%s\t\n",
			r.Op, r.Files, r.ApexMs, r.BaseMs, r.OverheadMs, r.Ratio, r.RatioMin, r.RatioMax, load, r.Baseline)
	}
	w.Flush()
	if l := res.Healthz; l != nil {
		fmt.Fprintf(out, "\nGET /healthz, %d keep-alive clients over loopback for %.1f s: %.0f requests/s, p50 %.2f ms, p99 %.2f ms, %d errors\n",
			l.Clients, l.Seconds, l.PerSecond, l.P50Ms, l.P99Ms, l.Errors)
	}
}

// hookRow is the hook row with n envs.
func (b *bench) hookRow(n int) func() (row, error) {
	return func() (row, error) { return b.hook(n) }
}

// hook measures `git apex hook post-merge` with n envs, each with a
// commit of its own, after a merge that brings in unrelated work: the
// hot path every merge and pull pays. Baseline: git status in the main
// checkout.
func (b *bench) hook(n int) (row, error) {
	head, err := b.output(b.git("rev-parse", "HEAD"))
	if err != nil {
		return row{}, err
	}
	cleanup, err := b.envsWithWork(n, head)
	defer cleanup()
	if err != nil {
		return row{}, err
	}
	// The merge: unrelated work arrives on main; ORIG_HEAD is where it was.
	merged, err := b.commitFile(head, "bench-unrelated.txt")
	if err != nil {
		return row{}, err
	}
	if err := untimed(b.git("update-ref", "ORIG_HEAD", head), b.git("update-ref", "refs/heads/main", merged)); err != nil {
		return row{}, err
	}
	defer untimed(b.git("update-ref", "refs/heads/main", head))
	return b.measure(fmt.Sprintf("hook (%d envs)", n), "git status --porcelain (main checkout)",
		func() (time.Duration, error) { return timed(b.apex("hook", "post-merge", "0")) },
		func() (time.Duration, error) { return timed(b.git("status", "--porcelain")) })
}

// mergeWithHooks measures a whole fast-forward `git merge` of unrelated
// work with git-apex's hooks installed and cfg.mergeEnvs envs, against
// the same merge with no hooks.
func (b *bench) mergeWithHooks() (row, error) {
	head, err := b.output(b.git("rev-parse", "HEAD"))
	if err != nil {
		return row{}, err
	}
	cleanup, err := b.envsWithWork(b.cfg.mergeEnvs, head)
	defer cleanup()
	if err != nil {
		return row{}, err
	}
	ahead, err := b.commitFile(head, "bench-unrelated.txt")
	if err != nil {
		return row{}, err
	}
	if err := untimed(b.apex("hooks", "install")); err != nil {
		return row{}, err
	}
	defer untimed(b.apex("hooks", "uninstall"))
	merge := func(hooks bool) (time.Duration, error) {
		args := []string{"merge", "-q", "--ff-only", ahead}
		if !hooks {
			args = append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)
		}
		d, err := timed(b.git(args...))
		if err == nil {
			err = untimed(b.git("reset", "-q", "--hard", head))
		}
		return d, err
	}
	return b.measure(fmt.Sprintf("git merge --ff-only, hooks installed (%d envs)", b.cfg.mergeEnvs), "the same merge without hooks",
		func() (time.Duration, error) { return merge(true) },
		func() (time.Duration, error) { return merge(false) })
}

// envsWithWork makes n envs, each with a commit of its own on head,
// cheaply: a worktree without checkout, adopted by git-apex, its commit
// written with plumbing. cleanup removes them.
func (b *bench) envsWithWork(n int, head string) (cleanup func(), err error) {
	var ids []string
	cleanup = func() {
		for _, id := range ids {
			untimed(b.apex("remove", "--force", "--delete-branch", id))
		}
	}
	for range n {
		name := b.next("h")
		path := filepath.Join(b.root, "envs", "task-"+name)
		if err := untimed(b.git("worktree", "add", "-q", "--no-checkout", "-b", name, path)); err != nil {
			return cleanup, err
		}
		ids = append(ids, "task-"+name)
		if err := untimed(b.apex("start", "--branch", name, "task", name)); err != nil {
			return cleanup, err
		}
		commit, err := b.commitFile(head, "bench-env-"+name+".txt")
		if err != nil {
			return cleanup, err
		}
		if err := untimed(b.git("update-ref", "refs/heads/"+name, commit)); err != nil {
			return cleanup, err
		}
	}
	return cleanup, nil
}

// commitFile writes a commit on parent that adds one file at the top.
func (b *bench) commitFile(parent, name string) (string, error) {
	top, err := b.output(b.git("ls-tree", parent))
	if err != nil {
		return "", err
	}
	blob, err := b.input("work in "+name+"\n", "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	tree, err := b.input(top+"\n100644 blob "+blob+"\t"+name+"\n", "mktree")
	if err != nil {
		return "", err
	}
	return b.output(b.git("commit-tree", tree, "-p", parent, "-m", "add "+name))
}

// output runs a command and returns its trimmed stdout.
func (b *bench) output(cmd *exec.Cmd) (string, error) {
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// input runs git with stdin and returns its trimmed stdout.
func (b *bench) input(stdin string, args ...string) (string, error) {
	cmd := b.git(args...)
	cmd.Stdin = strings.NewReader(stdin)
	return b.output(cmd)
}

// gc measures `git apex gc --merged` removing n merged envs against the
// same `git worktree remove` + `git branch -d` run by hand. Each run needs
// n fresh checked-out worktrees, so the row is opt-in (BENCH_GC=1).
func (b *bench) gc(n int) (row, error) {
	head, err := b.output(b.git("rev-parse", "HEAD"))
	if err != nil {
		return row{}, err
	}
	// makeMerged makes n worktrees on branches with a commit each, all
	// merged into main by one octopus commit (empty changes, so the main
	// checkout stays clean); adopt records them as envs.
	makeMerged := func(adopt bool) ([]string, []string, error) {
		var names, paths []string
		args := []string{"commit-tree", head + "^{tree}", "-p", head, "-m", "merge all"}
		for range n {
			name := b.next("m")
			path := filepath.Join(b.root, "envs", "task-"+name)
			cmds := []*exec.Cmd{b.git("worktree", "add", "-q", "-b", name, path)}
			if adopt { // before the commit, so the env has a commit of its own
				cmds = append(cmds, b.apex("start", "--branch", name, "task", name))
			}
			cmds = append(cmds, b.git("-C", path, "commit", "-q", "--allow-empty", "-m", "work"))
			if err := untimed(cmds...); err != nil {
				return nil, nil, err
			}
			names, paths = append(names, name), append(paths, path)
			args = append(args, "-p", name)
		}
		merge, err := b.output(b.git(args...))
		if err != nil {
			return nil, nil, err
		}
		return names, paths, untimed(b.git("update-ref", "refs/heads/main", merge))
	}
	restore := func() error { return untimed(b.git("update-ref", "refs/heads/main", head)) }
	return b.measure(fmt.Sprintf("gc --merged (%d envs)", n), fmt.Sprintf("%d x git worktree remove + git branch -d", n),
		func() (time.Duration, error) {
			if _, _, err := makeMerged(true); err != nil {
				return 0, err
			}
			defer restore()
			return timed(b.apex("gc", "--merged"))
		},
		func() (time.Duration, error) {
			names, paths, err := makeMerged(false)
			if err != nil {
				return 0, err
			}
			defer restore()
			var cmds []*exec.Cmd
			for i := range names {
				cmds = append(cmds, b.git("worktree", "remove", paths[i]), b.git("branch", "-q", "-d", names[i]))
			}
			return timed(cmds...)
		})
}

// benchImage is the image the full-mode rows use (testdata/docker/build-image.sh).
const benchImage = "apex-test:latest"

// dockerReady reports whether a daemon answers with the bench image.
func dockerReady() bool {
	return exec.Command("docker", "image", "inspect", benchImage).Run() == nil
}

// fullRows are the full-mode rows, where a Docker daemon has the bench
// image.
func (b *bench) fullRows() ([]row, error) {
	if !dockerReady() {
		fmt.Fprintf(os.Stderr, "bench: no Docker daemon with image %s: the full-mode rows are left out\n", benchImage)
		return nil, nil
	}
	rows, err := b.full()
	if err != nil || len(b.cfg.engines) == 0 {
		return rows, err
	}
	more, err := b.engineRows()
	return append(rows, more...), err
}

// full measures start in full mode against git worktree add -b plus
// docker run -d with the same mounts, and exec of `true` against
// docker exec.
func (b *bench) full() ([]row, error) {
	fullApex, err := b.fullPolicy("full", "")
	if err != nil {
		return nil, err
	}
	// The baseline container has the same mounts and limits as a full
	// env's: the worktree, a file over its .git, a private git directory,
	// the objects read-only.
	objects := filepath.Join(b.repo, ".git", "objects")
	gitfile := filepath.Join(b.root, "gitfile")
	if err := os.WriteFile(gitfile, []byte("gitdir: /git-apex/gitdir\n"), 0o644); err != nil {
		return nil, err
	}
	dockerRun := func(name, path string) *exec.Cmd {
		private := filepath.Join(b.root, "private-"+name)
		os.MkdirAll(private, 0o755)
		return exec.Command("docker", "run", "-d", "--init", "--name", name, "--network", "none",
			"--cap-drop", "ALL", "--cap-add", "CHOWN", "--cap-add", "DAC_OVERRIDE", "--cap-add", "FOWNER", "--cap-add", "FSETID",
			"--cap-add", "KILL", "--cap-add", "SETGID", "--cap-add", "SETUID", "--cap-add", "NET_BIND_SERVICE",
			"--security-opt", "no-new-privileges", "--pids-limit", "4096",
			"-v", path+":"+path, "-v", gitfile+":"+path+"/.git:ro", "-v", private+":/git-apex/gitdir", "-v", objects+":"+objects+":ro",
			"-w", path, "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), benchImage, "sleep", "2147483647")
	}
	start, err := b.measure("start --isolation full", "git worktree add -b + docker run -d",
		func() (time.Duration, error) {
			id := b.next("f")
			d, err := timed(fullApex("start", "--isolation", "full", "task", id))
			if err == nil {
				err = untimed(fullApex("remove", "--force", "--delete-branch", "task-"+id))
			}
			return d, err
		},
		func() (time.Duration, error) {
			name := b.next("d")
			path := filepath.Join(b.root, "envs", name)
			d, err := timed(b.git("worktree", "add", "-q", "-b", name, path), dockerRun("bench-"+name, path))
			if err == nil {
				err = untimed(exec.Command("docker", "rm", "-f", "bench-"+name), b.git("worktree", "remove", "--force", path), b.git("branch", "-D", name))
			}
			return d, err
		})
	if err != nil {
		return nil, err
	}
	id := "task-" + b.next("e")
	if err := untimed(fullApex("start", "--isolation", "full", id)); err != nil {
		return nil, err
	}
	defer untimed(fullApex("remove", "--force", "--delete-branch", id))
	ctr, err := b.output(exec.Command("docker", "ps", "-q", "--filter", "label=git-apex.env="+id))
	if err != nil {
		return nil, err
	}
	execRow, err := b.measure("exec -- true (full)", "docker exec <container> true",
		func() (time.Duration, error) { return timed(fullApex("exec", id, "--", "true")) },
		func() (time.Duration, error) { return timed(exec.Command("docker", "exec", ctr, "true")) })
	return []row{start, execRow}, err
}

// pooledStart measures start when a warm slot is idle (the slot is made,
// untimed, before each run) against git worktree add -b.
func (b *bench) pooledStart() (row, error) {
	return b.measure("start (warm slot)", "git worktree add -b",
		func() (time.Duration, error) {
			if err := untimed(b.apex("pool", "warm", "--size", "1")); err != nil {
				return 0, err
			}
			id := b.next("p")
			d, err := timed(b.apex("start", "task", id))
			if err == nil {
				err = untimed(b.apex("remove", "--force", "--delete-branch", "task-"+id))
			}
			return d, err
		},
		b.plainAdd)
}

// batch measures a batch of n tasks running `true`, j at a time in pool
// slots, against n sequential git worktree add + git worktree remove.
func (b *bench) batch(n, j int) (row, error) {
	var tasks strings.Builder
	for i := range n {
		fmt.Fprintf(&tasks, "[[task]]\nid = \"t%d\"\nrun = [\"true\"]\n", i)
	}
	file := filepath.Join(b.root, "tasks.toml")
	if err := os.WriteFile(file, []byte(tasks.String()), 0o644); err != nil {
		return row{}, err
	}
	defer untimed(b.apex("pool", "drain"))
	return b.measure(fmt.Sprintf("batch %d x true (-j %d)", n, j), fmt.Sprintf("%d x git worktree add + remove", n),
		func() (time.Duration, error) {
			cmd := b.apex("batch", "-j", fmt.Sprint(j), "--isolation", "worktree", "--results", os.DevNull, file)
			return timed(cmd)
		},
		func() (time.Duration, error) {
			var cmds []*exec.Cmd
			for range n {
				path := filepath.Join(b.root, "envs", b.next("s"))
				cmds = append(cmds, b.git("worktree", "add", "-q", "--detach", path), b.git("worktree", "remove", "--force", path))
			}
			return timed(cmds...)
		})
}

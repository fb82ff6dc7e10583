package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/git-apex/git-apex/container"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/gitx"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/nofollow"
	"github.com/git-apex/git-apex/policy"
	"github.com/git-apex/git-apex/pool"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/sandbox"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/trash"
	"github.com/git-apex/git-apex/words"
)

// Options configure a batch.
type Options struct {
	Parallelism int
	Isolation   string // worktree, full, shared or auto (worktree when Parallelism > 1, else shared)
	KeepFailed  bool
	Strict      bool      // full isolation or nothing: no fallback to worktree, no engine left out
	Results     io.Writer // one JSON line per finished task
	Progress    io.Writer // progress and the summary
	ProgressTTY bool      // Progress is a terminal: keep one progress line
	LogDir      string    // where each task's output goes
	Grace       time.Duration
	// Engines are the Docker contexts to spread the tasks over, each
	// running Parallelism at once (see fleet); none: the repository's
	// own engine, for full isolation.
	Engines []string
	// Fallback lets a batch that asks for full isolation fall back to
	// worktree slots when no container can be had: the tasks' commands
	// then run on the host. Without it such a batch fails (exit 6).
	Fallback bool
}

// The statuses of a Result: what became of the task.
const (
	Passed      = "passed"
	Failed      = "failed"      // its command exited non-zero
	Timeout     = "timeout"     // stopped at its timeout
	Error       = "error"       // its setup failed, or it could not start
	Interrupted = "interrupted" // it was running when the batch was interrupted
	Skipped     = "skipped"     // the batch was interrupted before it started
)

// Result is the JSON line of one task: every task of the file gets one,
// as it finishes, or, once the batch is interrupted, as interrupted or
// skipped.
type Result struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"` // one of the statuses above
	ExitCode   int       `json:"exit_code"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	DurationMs int64     `json:"duration_ms"`
	// AcquireMs is how long getting the task's slot at its commit took
	// (waiting for a free one included); ResetMs how long putting it back
	// clean at its pool commit took. 0 where there was none: a skipped
	// task, a kept one, the main checkout of a shared batch (acquire).
	AcquireMs int64  `json:"acquire_ms"`
	ResetMs   int64  `json:"reset_ms"`
	Slot      string `json:"slot"`
	Log       string `json:"log"`                // "" for a skipped task: it wrote none
	EnvPath   string `json:"env_path,omitempty"` // a failed task's env, kept with KeepFailed
	// Env is that env's identity: task-<id>, or task-<id>-2, -3, ... while
	// an earlier batch's kept task with the same id has task-<id>.
	Env   string `json:"env,omitempty"`
	Error string `json:"error,omitempty"`
	// With engines: the one that ran the task, and the one it ran on
	// first when that stopped answering.
	Engine      string `json:"engine,omitempty"`
	RetriedFrom string `json:"retried_from,omitempty"`
	// Warm is set when the task's container was one the warm pool made
	// ahead ([pool].containers).
	Warm bool `json:"warm,omitempty"`
}

// runner is one batch in progress.
type runner struct {
	home  *repo.Repo // the repository the batch runs from
	opts  Options
	mode  string // worktree, full or shared
	start time.Time
	fleet *fleet // the engines, when the batch has several; nil: the repository's own

	mu       sync.Mutex
	repos    map[string]*repo.Repo // other repositories' cached clones
	lines    map[string]*pool.Line // by task repo ("": this one): the tasks get slots first come, first served
	results  []Result
	running  int
	statuses map[string]int // how many results have each status
	resultsW error
}

// Run runs the tasks, opts.Parallelism at a time, and returns one result
// for each. ctx's end stops the running ones (interrupted: their process
// groups get TERM, then KILL after the grace, and their slots are reset)
// and starts no more (skipped); Run then returns ctx.Err() too.
func Run(ctx context.Context, home *repo.Repo, tasks []Task, opts Options) ([]Result, error) {
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	if opts.Grace == 0 {
		opts.Grace = 5 * time.Second
	}
	mode := opts.Isolation
	if mode == "auto" || mode == "" {
		mode = "worktree"
		if opts.Parallelism == 1 && !home.Git.Bare { // a bare repository has no checkout to share
			mode = "shared"
		}
	}
	r := &runner{home: home, opts: opts, start: time.Now(), repos: map[string]*repo.Repo{}, lines: map[string]*pool.Line{}, statuses: map[string]int{}}
	defer r.closeRepos()
	switch {
	case len(opts.Engines) > 0 && mode != "full" && opts.Isolation != "auto" && opts.Isolation != "":
		return nil, exitcode.New(exitcode.Usage, "--engines runs the tasks in containers: it takes --isolation full, not %s", opts.Isolation)
	case len(opts.Engines) > 0:
		f, err := connectFleet(ctx, home, opts.Engines, opts.Parallelism, opts.Strict)
		if err != nil {
			return nil, err
		}
		defer f.close()
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		go f.wake(fctx)
		r.fleet, mode = f, "full"
	case mode == "full":
		var err error
		if mode, err = fullOrFallback(ctx, home, opts.Strict, opts.Fallback); err != nil {
			return nil, err
		}
	}
	r.mode = mode
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, err
	}
	switch mode {
	case "worktree", "full":
		// A killed batch's slots, and its containers still working in
		// them, are reclaimed before the first task: not only once this
		// batch runs out of idle slots.
		if _, err := pool.New(r.home).Reclaim(ctx, nil); err != nil {
			return nil, err
		}
	case "shared":
		if err := r.checkShared(ctx, tasks); err != nil {
			return nil, err
		}
		opts.Parallelism, r.opts.Parallelism = 1, 1
	default:
		return nil, exitcode.New(exitcode.Usage, "unknown --isolation %q for batch: use worktree, full, shared or auto", opts.Isolation)
	}
	queue := make(chan Task)
	var wg sync.WaitGroup
	for range r.width() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range queue {
				r.finish(r.runTask(ctx, t, mode))
			}
		}()
	}
feed:
	for _, t := range tasks {
		select {
		case queue <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	r.skipRest(tasks)
	r.topUp()
	r.summary()
	if r.resultsW != nil {
		return r.results, r.resultsW
	}
	return r.results, ctx.Err()
}

// topUp has the pool make warm containers again in the background, when
// the policy keeps some ([pool].containers) and the batch took any.
func (r *runner) topUp() {
	pol, err := r.home.Policy()
	if err != nil || pol.Pool.Containers == 0 {
		return
	}
	for _, res := range r.results {
		if res.Warm {
			pool.New(r.home).TopUp()
			return
		}
	}
}

// skipRest writes a skipped result for each task that has none: the
// batch was interrupted before it started.
func (r *runner) skipRest(tasks []Task) {
	done := map[string]bool{}
	for _, res := range r.results {
		done[res.ID] = true
	}
	for _, t := range tasks {
		if !done[t.ID] {
			r.finish(r.skip(Result{ID: t.ID}))
		}
	}
}

// width is how many tasks run at once.
func (r *runner) width() int {
	if r.fleet != nil {
		return r.fleet.size()
	}
	return r.opts.Parallelism
}

// fullOrFallback is the mode of a batch that asks for full isolation:
// full when the runtime and the image are there; else, only with
// fallback, worktree with a warning. Without fallback, or when strict
// (the flag, or the policy's [isolation].strict), it fails with exit 6:
// the tasks' commands, asked to run in containers, would run on the host,
// where a policy commit naming an image that cannot be had would send the
// repository's own scripts.
func fullOrFallback(ctx context.Context, home *repo.Repo, strict, fallback bool) (string, error) {
	pol, err := home.Policy()
	if err != nil {
		return "", err
	}
	reason := sandbox.Ready(ctx, home, pol)
	switch {
	case reason == "":
		if trusted, host, err := home.Trusted(pol); err == nil && !trusted && (host.User != "" || len(host.Volumes) > 0) {
			home.WarnUntrusted(host) // the tasks' containers are made without them
		}
		return "full", nil
	case strict || pol.Isolation.Strict:
		return "", exitcode.New(exitcode.Runtime, "cannot run the batch in full isolation: %s; strict mode forbids falling back", reason)
	case !fallback:
		return "", exitcode.New(exitcode.Runtime, "cannot run the batch in full isolation: %s; nothing was run: the tasks' commands would run on the host instead, in worktree slots: fix the container, or pass --fallback to run them there", reason)
	}
	home.Warnf("the batch asked for full isolation but gets worktree (--fallback): %s; the tasks' commands run on the host", reason)
	return "worktree", nil
}

// checkShared refuses a shared batch when the main checkout has anything
// a task's clean-up could remove, or when a task wants another commit.
func (r *runner) checkShared(ctx context.Context, tasks []Task) error {
	if r.home.Git.Bare {
		return exitcode.New(exitcode.Usage, "cannot run a shared batch: %s is a bare repository, with no main checkout to run it in; use --isolation worktree", r.home.Git.MainRoot())
	}
	for _, t := range tasks {
		if t.Repo != "" || t.Base != "" {
			return exitcode.New(exitcode.Usage, "task %s names a repo or base: shared isolation runs in the main checkout as it is; use --isolation worktree", t.ID)
		}
	}
	changes, err := r.home.Git.Status(ctx, r.home.Git.MainRoot(), gitx.StatusOptions{})
	if err != nil {
		return err
	}
	if changes.Dirty() {
		return exitcode.New(exitcode.Refused, "cannot run a shared batch: the main checkout has %s, which cleaning up after a task would remove; commit or stash them, or use --isolation worktree", changes.Files())
	}
	return nil
}

// place is where one task runs.
type place struct {
	dir       string
	container string            // full isolation: the container the task's commands run in
	warm      bool              // the container was made ahead by the warm pool
	rt        container.Runtime // the runtime it runs in
	acquired  time.Duration     // how long getting the slot took
	reset     time.Duration     // how long release took to reset it; 0: it did not
	release   func(keep bool, reason string) (envPath string, err error)
	kept      string               // the identity release kept the slot as; "" when it did not
	started   func(hostexec.Group) // told each command's process group, for the slot's lease; nil: none kept
	mark      string               // the environment setting that marks the task's processes with their slot (pool.Lease.Mark); "": none
}

// runTask runs one task and returns its result: skipped when the batch
// was interrupted before its command could start, interrupted when it
// was running then (it is stopped and its slot reset).
func (r *runner) runTask(ctx context.Context, t Task, mode string) Result {
	res := Result{ID: t.ID, StartedAt: state.Stamp(time.Now()), Log: filepath.Join(r.opts.LogDir, t.ID+".log")}
	if ctx.Err() != nil {
		return r.skip(Result{ID: t.ID})
	}
	r.track(+1)
	defer r.track(-1)
	log, err := os.Create(res.Log)
	if err != nil {
		return r.fail(res, Error, err)
	}
	defer log.Close()
	var on, first *engine // with a fleet: the engine the task runs on, and the one it ran on first
	for {
		if r.fleet != nil {
			if on = r.fleet.take(ctx, first); on == nil {
				if ctx.Err() != nil {
					return r.unstarted(res, first != nil)
				}
				return r.fail(res, Error, errors.New("no engine of the batch answers any more"))
			}
			res.Engine = on.Name
		}
		pl, err := r.placeFor(ctx, t, mode, on)
		if err != nil && ctx.Err() != nil {
			r.give(on)
			return r.unstarted(res, first != nil)
		}
		if err != nil && r.retry(ctx, t.ID, on, &first, log, "", "could not make the task's container", false) {
			continue
		}
		if err != nil {
			r.give(on)
			return r.fail(res, Error, err)
		}
		res.Slot, res.Warm, res.AcquireMs = pl.dir, pl.warm, pl.acquired.Milliseconds()
		status, code, runErr := r.execute(ctx, t, pl, log)
		if ctx.Err() != nil && status != Passed {
			fmt.Fprintf(log, "--- interrupted: the task was stopped (exit %d)\n", code)
			res = r.settle(res, t, pl, Interrupted, code, nil)
			r.give(on)
			return res
		}
		lost := "" // an error with no exit status: the engine could not run the command at all
		if status == Error && code == -1 {
			lost = "could not run the task's command"
		}
		// Killed (SIGKILL or SIGTERM): perhaps by the engine stopping.
		killed := code == 128+int(syscall.SIGKILL) || code == 128+int(syscall.SIGTERM)
		if status != Passed && r.retry(ctx, t.ID, on, &first, log, pl.container, lost, killed) {
			pl.release(false, "") // on an engine gone: the slot stays leased until this process ends
			continue
		}
		res = r.settle(res, t, pl, status, code, runErr)
		r.give(on)
		if first != nil {
			res.RetriedFrom = first.Name
		}
		return res
	}
}

// retry decides whether a task that did not pass on engine on runs again
// elsewhere, once: when on no longer answers (it is left out from then
// on), when lost says why the engine failed the task (it could not make
// its container, or run its command: an engine shutting down still
// answers on the connections it has), or when the task's container ctr
// stopped under it. A task that was killed gives the engine a few
// seconds to show that it is stopping. first becomes on.
func (r *runner) retry(ctx context.Context, task string, on *engine, first **engine, log io.Writer, ctr, lost string, killed bool) bool {
	if on == nil || *first != nil || ctx.Err() != nil {
		return false
	}
	var why string
	for wait := 0; ; wait++ {
		if !r.fleet.answers(ctx, on) {
			why = "stopped answering"
			break
		}
		if lost != "" {
			why = lost
			break
		}
		if stopped(ctx, on, ctr) {
			why = "stopped the task's container"
			break
		}
		if !killed || wait == 20 || ctx.Err() != nil {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
	r.fleet.give(on)
	*first = on
	fmt.Fprintf(log, "--- engine %s %s: the task runs again on another\n", on.Name, why)
	r.home.Warnf("engine %s %s: task %s runs again on another", on.Name, why, task)
	return true
}

// stopped reports whether the container ctr on engine on is known not to
// run any more.
func stopped(ctx context.Context, on *engine, ctr string) bool {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	info, err := on.Runtime.Inspect(ictx, ctr)
	return err == nil && info.State != "running"
}

// give returns the task's place on its engine, if it has one.
func (r *runner) give(on *engine) {
	if on != nil {
		r.fleet.give(on)
	}
}

// settle releases a task's place and completes its result.
func (r *runner) settle(res Result, t Task, pl *place, status string, code int, runErr error) Result {
	res.Status, res.ExitCode = status, code
	if runErr != nil {
		res.Error = runErr.Error()
	}
	keep := (status == Failed || status == Timeout || status == Error) && r.opts.KeepFailed
	envPath, err := pl.release(keep, fmt.Sprintf("batch task %s %s (exit %d)", t.ID, status, code))
	res.EnvPath, res.Env, res.ResetMs = envPath, pl.kept, pl.reset.Milliseconds()
	if err != nil && res.Error == "" {
		res.Error = "cleaning up: " + err.Error()
	}
	return r.stamp(res)
}

// endShared ends what a shared task left running (in the background, in
// a session of its own): the processes that carry its mark, and the
// members of its commands' process groups, as a pool slot's are
// (hostexec.EndAll), before the main checkout is restored, so that none
// writes there once the next task runs. A process that only works in
// the main checkout is not one of them: the user's shell or editor may.
func (r *runner) endShared(mark string, groups []hostexec.Group, task string) error {
	traces := []hostexec.Trace{{Mark: mark}}
	for _, g := range groups {
		traces = append(traces, hostexec.Trace{Group: g})
	}
	find := func() []hostexec.Process {
		var procs []hostexec.Process
		seen := map[int]bool{}
		for _, found := range hostexec.Find(traces) {
			for _, p := range found {
				if !seen[p.PID] {
					seen[p.PID] = true
					procs = append(procs, p)
				}
			}
		}
		return procs
	}
	procs, err := hostexec.EndAll(find, repo.KillGrace(r.home))
	if len(procs) > 0 {
		r.home.Notef("task %s: ended %s, left running by it in the main checkout", task, hostexec.Describe(procs))
	}
	if err != nil {
		return fmt.Errorf("what task %s left running: %w", task, err)
	}
	return nil
}

// keepShared keeps what the restore after shared task task would
// discard in the main checkout at root (the task's changes, and the
// user's own, made there while it ran) in the trash, as the work of the
// identity task-<task>, and says how to get it back: `git apex restore`
// makes it an env of its own, not in the main checkout. The restore
// moves no HEAD, so no commit is kept. An error says nothing may be
// discarded: the main checkout is left as the task left it.
func (r *runner) keepShared(ctx context.Context, root, task string) error {
	id, err := policy.NewIdentity("task", task)
	if err != nil {
		return err
	}
	lk, err := r.home.Lock(ctx)
	if err != nil {
		return fmt.Errorf("cannot keep what task %s left in the main checkout in the trash (%w): it is left as it is, not restored", task, err)
	}
	defer lk.Unlock()
	head, err := lk.WorktreeHead(ctx, root)
	if err != nil {
		head = "" // an unborn HEAD: no commit to keep
	}
	what := trash.Entry{Identity: id.String(), Mode: string(policy.Worktree), Path: root}
	kept, err := trash.Record(ctx, lk, what, trash.Options{Made: head}, r.home.Store.Now())
	if err != nil {
		return fmt.Errorf("cannot keep what task %s left in the main checkout in the trash (%w): it is left as it is, not restored", task, err)
	}
	if kept != nil {
		r.home.Notef("task %s: discarded %s changed in the main checkout into the trash; undo with `git apex restore %s`", task, words.Count(kept.Files, "file"), kept.Identity)
	}
	return nil
}

// placeFor gives a task its place: a leased slot at its base commit
// (worktree), or the main checkout (shared).
func (r *runner) placeFor(ctx context.Context, t Task, mode string, on *engine) (*place, error) {
	if mode == "shared" {
		root := r.home.Git.MainRoot()
		var groups []hostexec.Group
		pl := &place{dir: root, mark: pool.MarkVar + "=" + root, started: func(g hostexec.Group) { groups = append(groups, g) }}
		pl.release = func(bool, string) (string, error) {
			began := time.Now()
			cctx := context.WithoutCancel(ctx)
			err := r.endShared(pl.mark, groups, t.ID)
			if kerr := r.keepShared(cctx, root, t.ID); kerr != nil {
				return "", errors.Join(err, kerr)
			}
			err = errors.Join(err, r.home.Git.RestoreTracked(cctx, root))
			pl.reset = time.Since(began)
			return "", err
		}
		if err := writeFiles(root, t.Files); err != nil {
			pl.release(false, "")
			return nil, err
		}
		return pl, nil
	}
	rp, err := r.repoOf(ctx, t.Repo)
	if err != nil {
		return nil, err
	}
	slots := pool.New(rp).InLine(r.line(t.Repo))
	commit, err := slots.BaseCommit(ctx, t.Base)
	if err != nil && t.Repo != "" {
		if ferr := fetch(ctx, rp); ferr == nil {
			commit, err = slots.BaseCommit(ctx, t.Base)
		}
	}
	if err != nil {
		return nil, err
	}
	var engine *sandbox.Engine
	if on != nil {
		engine = on.Engine
	}
	var lease *pool.Lease
	began := time.Now()
	if mode == "full" {
		lease, err = slots.AcquireWarm(ctx, commit, r.width(), 24*time.Hour, engine)
	} else {
		lease, err = slots.Acquire(ctx, commit, r.width(), 24*time.Hour)
	}
	if err != nil {
		return nil, err
	}
	id, _ := policy.NewIdentity("task", t.ID)
	pl := &place{dir: lease.Path(), acquired: time.Since(began), mark: lease.Mark(), started: func(g hostexec.Group) {
		if err := slots.RecordTask(context.WithoutCancel(ctx), lease, g); err != nil {
			rp.Warnf("%s: cannot record its process group in the lease of %s: %v", id, lease.Path(), err)
		}
	}}
	// Before its container is made: in copy mode, what is there then is
	// all it gets.
	if err := writeFiles(pl.dir, t.Files); err != nil {
		slots.Release(context.WithoutCancel(ctx), lease)
		return nil, err
	}
	if mode == "full" {
		written := make([]string, 0, len(t.Files))
		for name := range t.Files {
			written = append(written, filepath.ToSlash(filepath.Clean(name)))
		}
		pl.warm = lease.Warm()
		if pl.container, err = slots.Container(ctx, lease, id, engine, written); err != nil {
			slots.Release(context.WithoutCancel(ctx), lease)
			return nil, err
		}
		if engine != nil {
			pl.rt = engine.Runtime
		} else {
			pl.rt, _ = rp.Runtime(ctx) // Container connected it
		}
	}
	pl.release = func(keep bool, reason string) (string, error) {
		cctx := context.WithoutCancel(ctx)
		if pl.container != "" {
			if err := slots.DropContainer(cctx, lease, pl.container, id, keep, engine); err != nil {
				return "", err
			}
		}
		if keep {
			env, err := slots.KeepSlot(cctx, lease, id, reason)
			if err == nil {
				pl.kept = env.Identity
				return env.Path, nil
			}
			// Not kept as an env: its work goes to the trash, and the
			// slot back to the pool, before the batch exits.
			kept, terr := slots.ReleaseToTrash(cctx, lease, id)
			switch {
			case terr != nil:
				return "", fmt.Errorf("cannot keep its slot as %s (%v), nor its work in the trash (%v): the slot %s is left as it is, leased, for `git apex doctor --fix`", id, err, terr, lease.Slot.Path)
			case kept != nil:
				return "", fmt.Errorf("cannot keep its slot as %s (%v): its work is in the trash; `git apex restore %s` brings it back", id, err, kept.Identity)
			}
			return "", fmt.Errorf("cannot keep its slot as %s (%v); it had changed nothing", id, err)
		}
		began := time.Now()
		err := slots.Release(cctx, lease)
		pl.reset = time.Since(began)
		return "", err
	}
	return pl, nil
}

// writeFiles writes a task's files into dir, following no symbolic link:
// a committed link (or one a container planted) named by a file, or on
// the way to it, would make the host write wherever it points. Every
// file is checked before any is written, so a refused one leaves the
// others unwritten.
func writeFiles(dir string, files map[string]string) error {
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if err := nofollow.Check(dir, name); err != nil {
			return fileRefused(name, err)
		}
	}
	for _, name := range names {
		if err := nofollow.WriteFile(dir, name, []byte(files[name]), 0o644); err != nil {
			return fileRefused(name, err)
		}
	}
	return nil
}

// fileRefused says why a task's file was not written.
func fileRefused(name string, err error) error {
	var e *nofollow.Error
	if errors.As(err, &e) {
		return fmt.Errorf("cannot write the task's file %s: %s in the task's directory %s; a task's files are never written through a link or over a special file: remove it from the task's base (or, when a container put it there, run `git apex pool drain`)", name, e.Part, e.Why)
	}
	return fmt.Errorf("cannot write the task's file %s: %w", name, err)
}

// fetch updates a cached clone from its origin, under its lock.
func fetch(ctx context.Context, rp *repo.Repo) error {
	lk, err := rp.Lock(ctx)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return lk.Fetch(ctx)
}

// execute runs the task's setup, then its command, all output to log. The command runs in its own process group: at its
// timeout or at an interrupt the group gets TERM, then KILL after the
// grace period.
func (r *runner) execute(ctx context.Context, t Task, pl *place, log io.Writer) (status string, code int, err error) {
	dir := pl.dir
	vars := (&state.Env{Identity: "task-" + t.ID, Path: dir, Workflow: "task", Mode: r.mode}).Vars()
	env := append(gitx.CleanEnv(), vars...)
	if pl.mark != "" {
		env = append(env, pl.mark) // the last of a name is the one a process gets
	}
	run := func(timeout time.Duration, argv ...string) (int, error) {
		if pl.container == "" {
			return hostexec.Run(ctx, hostexec.Command{Argv: argv, Dir: dir, Env: env, Stdout: log, Stderr: log,
				Timeout: timeout, Grace: r.opts.Grace, Started: pl.started})
		}
		cctx := ctx
		if timeout > 0 {
			var cancel context.CancelFunc
			cctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		return pl.rt.Exec(cctx, pl.container, container.ExecSpec{Cmd: argv, WorkDir: dir, Env: vars, Stdout: log, Stderr: log})
	}
	for _, setup := range t.Setup {
		fmt.Fprintf(log, "$ %s\n", setup)
		if code, err := run(0, "sh", "-c", setup); err != nil || code != 0 {
			return Error, code, fmt.Errorf("setup `%s` exited with status %d", setup, code)
		}
	}
	fmt.Fprintf(log, "$ %q\n", t.Run)
	code, err = run(time.Duration(t.Timeout), t.Run...)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout, code, fmt.Errorf("timed out after %v", time.Duration(t.Timeout))
	case err != nil:
		return Error, code, err
	case code != 0:
		return Failed, code, nil
	}
	return Passed, 0, nil
}

// repoOf returns a task's repository: this one, or a cached bare clone
// of the one at url, made once under apex/repos.
func (r *runner) repoOf(ctx context.Context, url string) (*repo.Repo, error) {
	if url == "" {
		return r.home, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rp, ok := r.repos[url]; ok {
		return rp, nil
	}
	dir := repo.CloneDir(r.home, url)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := gitx.Clone(ctx, url, dir, true); err != nil {
		return nil, fmt.Errorf("cannot clone %s: %w", url, err)
	}
	rp, err := repo.Open(ctx, dir, repo.Options{})
	if err != nil {
		return nil, err
	}
	r.repos[url] = rp
	return rp, nil
}

// line is the line in which the tasks of the repository at url ("":
// this one) wait for their pool's slots (see pool.Line).
func (r *runner) line(url string) *pool.Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lines[url] == nil {
		r.lines[url] = &pool.Line{}
	}
	return r.lines[url]
}

func (r *runner) closeRepos() {
	for _, rp := range r.repos {
		rp.Close()
	}
}

func (r *runner) fail(res Result, status string, err error) Result {
	res.Status, res.ExitCode, res.Error = status, -1, err.Error()
	return r.stamp(res)
}

// unstarted is the result of a task the interrupt caught before its
// command started: skipped, its empty log removed; or interrupted, when
// it ran on an engine before and was to run again on another.
func (r *runner) unstarted(res Result, ranBefore bool) Result {
	if ranBefore {
		res.Status, res.ExitCode = Interrupted, -1
		return r.stamp(res)
	}
	os.Remove(res.Log)
	return r.skip(res)
}

// skip makes res a skipped task's result: its command never ran.
func (r *runner) skip(res Result) Result {
	res.Status, res.ExitCode, res.Log = Skipped, -1, ""
	if res.StartedAt.IsZero() {
		res.StartedAt = state.Stamp(time.Now())
	}
	return r.stamp(res)
}

func (r *runner) stamp(res Result) Result {
	res.FinishedAt = state.Stamp(time.Now())
	res.DurationMs = res.FinishedAt.Sub(res.StartedAt).Milliseconds()
	return res
}

func (r *runner) track(delta int) {
	r.mu.Lock()
	r.running += delta
	r.mu.Unlock()
	r.progress()
}

// finish records a result and writes its JSON line.
func (r *runner) finish(res Result) {
	r.mu.Lock()
	r.results = append(r.results, res)
	r.statuses[res.Status]++
	line, _ := json.Marshal(res)
	if _, err := fmt.Fprintf(r.opts.Results, "%s\n", line); err != nil && r.resultsW == nil {
		r.resultsW = err
	}
	r.mu.Unlock()
	r.progress()
}

// progress keeps a line up to date on a terminal.
func (r *runner) progress() {
	if !r.opts.ProgressTTY {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.opts.Progress, "\r\033[Kdone %d, running %d, failed %d, %.1fs", len(r.results), r.running, r.failedCount(), time.Since(r.start).Seconds())
}

// keptAs says, for the summary, where a failed task's env was kept
// (" kept as task-x-2 at /path"), or why it was not.
func keptAs(res Result) string {
	switch {
	case res.Env != "":
		return fmt.Sprintf("  kept as %s at %s", res.Env, res.EnvPath)
	case res.Error != "":
		return "  (" + res.Error + ")"
	}
	return ""
}

// failedCount is how many tasks ran and did not pass. The caller holds mu.
func (r *runner) failedCount() int {
	return len(r.results) - r.statuses[Passed] - r.statuses[Interrupted] - r.statuses[Skipped]
}

// summary prints a table of the results.
func (r *runner) summary() {
	if r.opts.ProgressTTY {
		fmt.Fprintln(r.opts.Progress)
	}
	stopped := ""
	if n, m := r.statuses[Interrupted], r.statuses[Skipped]; n+m > 0 {
		stopped = fmt.Sprintf(", %d interrupted, %d skipped", n, m)
	}
	fmt.Fprintf(r.opts.Progress, "%s: %d passed, %d failed%s, in %.1fs; logs in %s\n",
		words.Count(len(r.results), "task"), r.statuses[Passed], r.failedCount(), stopped, time.Since(r.start).Seconds(), r.opts.LogDir)
	for _, res := range r.results {
		if res.Status != Passed && res.Status != Skipped {
			fmt.Fprintf(r.opts.Progress, "  %-20s %-11s exit %d  %s%s\n", res.ID, res.Status, res.ExitCode, res.Log, keptAs(res))
		}
	}
}

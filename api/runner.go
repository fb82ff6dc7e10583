package api

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

// runner runs the workflows' commands in the background, at most a
// number at once. A workflow's state lives in its env's metadata (see
// the meta* keys), so it survives the server and the command line sees
// it; every change of it is also an event (queued, running, completed,
// failed).
type runner struct {
	s      *server
	slots  chan struct{}
	ctx    context.Context // ends at shutdown: every command is stopped
	cancel context.CancelFunc
	grace  time.Duration

	mu     sync.Mutex
	active map[string]*run // by repository and identity
	wg     sync.WaitGroup
}

// run is one workflow's commands while they run.
type run struct {
	stop context.CancelCauseFunc
	done chan struct{}
}

func newRunner(s *server, max int) *runner {
	ctx, cancel := context.WithCancel(context.Background())
	grace := s.opts.Grace
	if grace == 0 {
		grace = 2 * time.Second
	}
	return &runner{s: s, slots: make(chan struct{}, max), ctx: ctx, cancel: cancel, grace: grace, active: map[string]*run{}}
}

func runKey(root, identity string) string { return root + "\x00" + identity }

// errShutdown and errRemoved say why a command was stopped.
var (
	errShutdown = fmt.Errorf("stopped: the server shut down")
	errRemoved  = fmt.Errorf("stopped: the environment was removed")
)

// submit queues argv to run in the env of identity and returns the
// metadata it recorded. It refuses (exit 3) while the env's commands run.
func (rn *runner) submit(ctx context.Context, svc *service.Service, root, identity string, argv, vars []string) (map[string]string, error) {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	key := runKey(root, identity)
	if rn.ctx.Err() != nil {
		return nil, exitcode.New(exitcode.Refused, "the server is shutting down: no commands start")
	}
	if _, ok := rn.active[key]; ok {
		return nil, exitcode.New(exitcode.Refused, "commands are already running in %s: wait until GET /api/developer/workflows/%s says they ended", identity, identity)
	}
	dir := filepath.Join(svc.Repo().Git.ApexDir(), "logs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pid, start := hostexec.Self()
	meta := map[string]string{metaStatus: queued, metaExitCode: "", metaError: "",
		metaLog:    filepath.Join(dir, identity+"-"+time.Now().UTC().Format("20060102T150405.000000000")+".log"),
		metaRunner: fmt.Sprintf("%d:%d", pid, start)}
	if err := svc.Annotate(ctx, identity, meta, queued, strings.Join(argv, " ")); err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancelCause(rn.ctx)
	r := &run{stop: stop, done: make(chan struct{})}
	rn.active[key] = r
	rn.wg.Add(1)
	go rn.run(runCtx, r, key, root, identity, argv, vars, meta[metaLog])
	return meta, nil
}

// run waits for a slot, runs argv and records how it ended.
func (rn *runner) run(ctx context.Context, r *run, key, root, identity string, argv, vars []string, logPath string) {
	defer rn.wg.Done()
	defer func() {
		rn.mu.Lock()
		delete(rn.active, key)
		rn.mu.Unlock()
		close(r.done)
	}()
	select {
	case rn.slots <- struct{}{}:
		defer func() { <-rn.slots }()
	case <-ctx.Done():
		rn.record(root, identity, failed, -1, context.Cause(ctx).Error())
		return
	}
	code, err := rn.exec(ctx, root, identity, argv, vars, logPath)
	status, why := completed, ""
	switch {
	case ctx.Err() != nil: // stopped: interrupted, as the command line's exec reports it
		status, why, code = failed, context.Cause(ctx).Error(), exitcode.Interrupted
	case err != nil:
		status, why = failed, err.Error()
	case code != 0:
		status = failed
	}
	rn.record(root, identity, status, code, why)
}

// exec runs argv in the env, its output to the log.
func (rn *runner) exec(ctx context.Context, root, identity string, argv, vars []string, logPath string) (int, error) {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return -1, err
	}
	defer log.Close()
	code := -1
	err = rn.s.withService(context.WithoutCancel(ctx), root, func(svc *service.Service) error {
		if err := svc.Annotate(ctx, identity, map[string]string{metaStatus: running}, running, strings.Join(argv, " ")); err != nil {
			return err
		}
		fmt.Fprintf(log, "$ %q\n", argv)
		var err error
		code, err = svc.Exec(ctx, service.ExecRequest{Identity: identity, Cmd: argv, Env: vars,
			Stdout: log, Stderr: log, Background: true, Grace: rn.grace})
		return err
	})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(log, "git-apex: %v\n", err)
	}
	return code, err
}

// record writes how a workflow's commands ended.
func (rn *runner) record(root, identity, status string, code int, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	detail := fmt.Sprintf("exit status %d", code)
	if why != "" {
		detail += ": " + why
	}
	err := rn.s.withService(ctx, root, func(svc *service.Service) error {
		return svc.Annotate(ctx, identity, map[string]string{metaStatus: status, metaExitCode: strconv.Itoa(code), metaError: why}, status, detail)
	})
	if err != nil && exitcode.Of(err) != exitcode.NotFound {
		rn.s.notef("cannot record that %s %s: %v", identity, status, err)
	}
}

// stopRun stops the commands running in an env, if any, and waits until
// their end is recorded.
func (rn *runner) stopRun(root, identity string, why error) {
	rn.mu.Lock()
	r := rn.active[runKey(root, identity)]
	rn.mu.Unlock()
	if r != nil {
		r.stop(why)
		<-r.done
	}
}

// running reports whether an env's commands run.
func (rn *runner) running(root, identity string) bool {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	_, ok := rn.active[runKey(root, identity)]
	return ok
}

// stop stops every command and waits until their ends are recorded.
func (rn *runner) stop() {
	rn.mu.Lock()
	for _, r := range rn.active {
		r.stop(errShutdown)
	}
	rn.cancel()
	rn.mu.Unlock()
	rn.wg.Wait()
}

// failOrphans marks failed the workflows of a repository whose server
// stopped before their commands ended (it was killed).
func (rn *runner) failOrphans(ctx context.Context, root string) {
	r, err := repo.Open(ctx, root, rn.s.opts.Repo)
	if err != nil {
		return
	}
	envs, err := r.Store.Envs(ctx, false)
	r.Close()
	if err != nil {
		return
	}
	for _, env := range envs {
		st := env.Metadata[metaStatus]
		if st != queued && st != running {
			continue
		}
		var pid int
		var start int64
		fmt.Sscanf(env.Metadata[metaRunner], "%d:%d", &pid, &start)
		if !hostexec.Alive(pid, start) {
			rn.record(root, env.Identity, failed, -1, "stopped: the server running it ended before it did")
		}
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// fullPolicy writes a full-mode policy for the bench's repository with
// the given [container] lines added, and returns a git-apex command
// maker that uses it (trusted).
func (b *bench) fullPolicy(name, extra string) (func(args ...string) *exec.Cmd, error) {
	policy := filepath.Join(b.root, name+".toml")
	body := fmt.Sprintf("[worktree]\nroot = %q\n[container]\nimage = %q\nnetwork = \"none\"\n%s", filepath.Join(b.root, "envs"), benchImage, extra)
	if err := os.WriteFile(policy, []byte(body), 0o644); err != nil {
		return nil, err
	}
	apex := func(args ...string) *exec.Cmd {
		cmd := b.apex(args...)
		cmd.Env = append(cmd.Env, "GIT_APEX_POLICY="+policy)
		return cmd
	}
	return apex, untimed(apex("trust"))
}

// engineRows are the copy-mode start, the batch over the engines and the
// batch taking warm containers.
func (b *bench) engineRows() ([]row, error) {
	if !dockerReady() {
		return nil, fmt.Errorf("the engine rows need a Docker daemon with image %s", benchImage)
	}
	copied, err := b.copyStart()
	if err != nil {
		return nil, err
	}
	spread, err := b.batchEngines(b.cfg.engines)
	if err != nil {
		return nil, err
	}
	warm, err := b.warmBatch()
	return []row{copied, spread, warm}, err
}

// warmBatch measures a batch of 8 `true` tasks, all at once in full
// isolation on the default engine, taking containers the warm pool made
// ahead (made untimed before each run), against the same batch making
// its containers. Both find their 8 slots made.
func (b *bench) warmBatch() (row, error) {
	apex, err := b.fullPolicy("warm", "")
	if err != nil {
		return row{}, err
	}
	file, err := b.tasksFile("warm-tasks.toml", 8, `["true"]`)
	if err != nil {
		return row{}, err
	}
	defer untimed(apex("pool", "drain"))
	batch := func(warm bool) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			if warm {
				if err := untimed(apex("pool", "warm", "--containers", "8")); err != nil {
					return 0, err
				}
			}
			return timed(apex("batch", "-j", "8", "--isolation", "full", "--results", os.DevNull, file))
		}
	}
	return b.measure("batch 8 x true (-j 8, full), warm containers", "the same making its containers", batch(true), batch(false))
}

// copyStart measures a full start in copy mode (the worktree and a
// shallow git directory copied into the container) against one in mount
// mode, on the same engine.
func (b *bench) copyStart() (row, error) {
	byCopy, err := b.fullPolicy("copy", "transfer = \"copy\"\n")
	if err != nil {
		return row{}, err
	}
	byMount, err := b.fullPolicy("mount", "transfer = \"mount\"\n")
	if err != nil {
		return row{}, err
	}
	start := func(apex func(args ...string) *exec.Cmd) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			id := b.next("c")
			d, err := timed(apex("start", "--isolation", "full", "task", id))
			if err == nil {
				err = untimed(apex("remove", "--force", "--delete-branch", "task-"+id))
			}
			return d, err
		}
	}
	return b.measure("start --isolation full (copy)", "start --isolation full (mount)", start(byCopy), start(byMount))
}

// batchEngines measures a batch of 40 `sleep 1` tasks, 8 at a time on
// each engine, spread over the engines named, against the same batch on
// the first alone.
func (b *bench) batchEngines(engines []string) (row, error) {
	apex, err := b.fullPolicy("engines", "")
	if err != nil {
		return row{}, err
	}
	file, err := b.tasksFile("sleep-tasks.toml", 40, `["sleep", "1"]`)
	if err != nil {
		return row{}, err
	}
	defer untimed(b.apex("pool", "drain"))
	on := func(names ...string) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			return timed(apex("batch", "-j", "8", "--engines", strings.Join(names, ","), "--results", os.DevNull, file))
		}
	}
	return b.measure(fmt.Sprintf("batch 40 x sleep 1 (-j 8), engines %s", strings.Join(engines, ",")),
		"the same on "+engines[0]+" alone", on(engines...), on(engines[0]))
}

// tasksFile writes, as name in the bench's directory, a batch file of n
// tasks each running run (a TOML array), and returns its path.
func (b *bench) tasksFile(name string, n int, run string) (string, error) {
	var tasks strings.Builder
	for i := range n {
		fmt.Fprintf(&tasks, "[[task]]\nid = \"t%d\"\nrun = %s\n", i, run)
	}
	file := filepath.Join(b.root, name)
	return file, os.WriteFile(file, []byte(tasks.String()), 0o644)
}

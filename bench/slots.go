package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// slotRows measures what a batch task pays for its pool slot, as its
// result line reports it. Each run is a batch of one task whose base is
// one commit behind the pool's (the slot, idle at the pool commit, is
// checked out there); the task edits a tracked file and writes an
// untracked one and an ignored-style build directory. acquire_ms is set
// beside `git checkout --detach` of the same commit in a worktree at the
// pool commit; reset_ms, putting the slot back at the pool commit clean,
// beside `git reset --hard <pool commit> && git clean -fdx` after the
// same writes in that worktree.
func (b *bench) slotRows() ([]row, error) {
	head, err := b.output(b.git("rev-parse", "HEAD"))
	if err != nil {
		return nil, err
	}
	base, err := b.output(b.git("rev-parse", "HEAD~1"))
	if err != nil {
		return nil, err
	}
	tracked, err := b.output(b.git("ls-files", "-z"))
	if err != nil {
		return nil, err
	}
	first, _, _ := strings.Cut(tracked, "\x00")
	writes := fmt.Sprintf("echo changed >> %q && mkdir -p build && echo x > build/out.o && echo y > new.txt", first)
	tasks, results := filepath.Join(b.root, "slot-tasks.toml"), filepath.Join(b.root, "slot-results.jsonl")
	defer untimed(b.apex("pool", "drain"))
	// task runs a batch of one task and returns its result line.
	task := func() (acquire, reset time.Duration, err error) {
		spec := fmt.Sprintf("[[task]]\nid = %q\nbase = %q\nrun = [\"sh\", \"-c\", %q]\n", b.next("t"), base, writes)
		if err := os.WriteFile(tasks, []byte(spec), 0o644); err != nil {
			return 0, 0, err
		}
		if err := untimed(b.apex("batch", "--isolation", "worktree", "--results", results, tasks)); err != nil {
			return 0, 0, err
		}
		data, err := os.ReadFile(results)
		if err != nil {
			return 0, 0, err
		}
		var res struct {
			Status    string `json:"status"`
			AcquireMs int64  `json:"acquire_ms"`
			ResetMs   int64  `json:"reset_ms"`
		}
		if err := json.Unmarshal(data, &res); err != nil || res.Status != "passed" {
			return 0, 0, fmt.Errorf("the slot task's result %s: %v", data, err)
		}
		return time.Duration(res.AcquireMs) * time.Millisecond, time.Duration(res.ResetMs) * time.Millisecond, nil
	}
	wt := filepath.Join(b.root, "envs", b.next("checkout"))
	if err := untimed(b.git("worktree", "add", "-q", "--detach", wt, head)); err != nil {
		return nil, err
	}
	defer untimed(b.git("worktree", "remove", "--force", wt))
	in := func(args ...string) []string { return append([]string{"-C", wt}, args...) }
	acquire, err := b.measure("batch task acquire_ms", "git checkout --detach",
		func() (time.Duration, error) {
			d, _, err := task()
			return d, err
		},
		func() (time.Duration, error) {
			d, err := timed(b.git(in("checkout", "-q", "--detach", base)...))
			if err == nil {
				err = untimed(b.git(in("checkout", "-q", "--detach", head)...))
			}
			return d, err
		})
	if err != nil {
		return nil, err
	}
	reset, err := b.measure("batch task reset_ms", "git reset --hard && git clean -fdx",
		func() (time.Duration, error) {
			_, d, err := task()
			return d, err
		},
		func() (time.Duration, error) {
			if err := untimed(b.git(in("checkout", "-q", "--detach", base)...)); err != nil {
				return 0, err
			}
			sh := exec.Command("sh", "-c", writes)
			sh.Dir, sh.Env = wt, b.env
			if err := untimed(sh); err != nil {
				return 0, err
			}
			return timed(b.git(in("reset", "-q", "--hard", head)...), b.git(in("clean", "-q", "-fdx")...))
		})
	return []row{acquire, reset}, err
}

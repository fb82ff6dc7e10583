package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTinyRun runs the whole harness on a 50-file repository with one
// pair per row, so that it cannot rot. It checks the shape of what it
// reports, never the times.
func TestTinyRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-apex; skipped with -short")
	}
	dir := t.TempDir()
	apex, empty := filepath.Join(dir, "git-apex"), filepath.Join(dir, "empty")
	for _, args := range [][]string{{"-o", apex, "../cmd/git-apex"}, {"-tags", "engine", "-o", apex + "-engine", "../cmd/git-apex"}, {"-o", empty, "./empty"}} {
		if out, err := exec.Command("go", append([]string{"build"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, out)
		}
	}
	cfg := config{apex: apex, empty: empty, sizes: []int{50}, slotSizes: []int{50}, pairs: 1, listCounts: []int{2}, hookCounts: []int{2, 3},
		mergeEnvs: 2, gcEnvs: 2, batchTasks: 3,
		apiEnvs: 2, loadClients: 4, loadTime: 200 * time.Millisecond,
		cacheDir: filepath.Join(dir, "cache"), outDir: filepath.Join(dir, "results")}
	var table strings.Builder
	res, err := run(cfg, &table)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, r := range res.Rows {
		ops = append(ops, r.Op)
		if strings.HasPrefix(r.Op, "gc") && r.Ratio < 0.2 {
			t.Errorf("gc row %+v: git-apex was much faster than removing by hand, so it removed nothing", r)
		}
		// A slot's acquire or reset can take less than the millisecond
		// its result line counts in.
		slot := strings.HasPrefix(r.Op, "batch task")
		if r.Files != 50 || r.Pairs != 1 || (r.ApexMs <= 0 || r.Ratio <= 0) && !slot || r.BaseMs <= 0 || r.Baseline == "" || r.Load == "" {
			t.Errorf("row %+v", r)
		}
	}
	want := "start,start (warm slot),hook (2 envs),git merge --ff-only, hooks installed (2 envs),batch 3 x true (-j 4),hook (3 envs)," +
		"remove,complete identities (2 envs),list (2 envs),gc --merged (2 envs),POST /workflows,GET /worktrees (2 envs),--version,path," +
		"batch task acquire_ms,batch task reset_ms"
	if dockerReady() {
		want = strings.Replace(want, ",POST /workflows", ",start --isolation full,exec -- true (full),POST /workflows", 1)
	}
	if got := strings.Join(ops, ","); got != want {
		t.Errorf("rows %s", got)
	}
	if l := res.Healthz; l == nil || l.Requests == 0 || l.Errors != 0 || l.P99Ms <= 0 {
		t.Errorf("healthz load: %+v", l)
	}
	if !strings.Contains(table.String(), "git worktree add -b") {
		t.Errorf("table:\n%s", table.String())
	}
	files, _ := filepath.Glob(filepath.Join(cfg.outDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("results files: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	var back result
	if err := json.Unmarshal(data, &back); err != nil || len(back.Rows) != len(ops) {
		t.Errorf("results JSON: %v, %d rows", err, len(back.Rows))
	}

	// The cached repository is left as generated: one worktree, one branch.
	repo := filepath.Join(cfg.cacheDir, "v1-50-files")
	out, _ := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if n := strings.Count(string(out), "worktree "); n != 1 {
		t.Errorf("%d worktrees left in the cached repository", n)
	}
	out, _ = exec.Command("git", "-C", repo, "branch", "--format=%(refname:short)").Output()
	if strings.TrimSpace(string(out)) != "main" {
		t.Errorf("branches left: %q", out)
	}
	out, _ = exec.Command("git", "-C", repo, "rev-list", "--count", "HEAD").Output()
	if strings.TrimSpace(string(out)) != "20" {
		t.Errorf("history of %s commits, want 20", out)
	}
}

// TestQuickRows checks which rows a quick run (BENCH_QUICK=1) measures.
func TestQuickRows(t *testing.T) {
	if testing.Short() {
		t.Skip("builds git-apex; skipped with -short")
	}
	t.Setenv("BENCH_QUICK", "1")
	dir := t.TempDir()
	cfg, err := configFromEnv(filepath.Join(dir, "git-apex"))
	if err != nil || !cfg.quick || fmt.Sprint(cfg.sizes, cfg.hookCounts, cfg.listCounts) != "[1000 10000] [100] [100]" {
		t.Fatalf("quick config %+v, %v", cfg, err)
	}
	t.Setenv("BENCH_SIZES", "1k")
	if one, err := configFromEnv(cfg.apex); err != nil || fmt.Sprint(one.sizes) != "[1000]" {
		t.Fatalf("quick config with BENCH_SIZES=1k: sizes %v, %v", one.sizes, err)
	}
	t.Setenv("BENCH_SIZES", "")
	if out, err := exec.Command("go", "build", "-o", cfg.apex, "../cmd/git-apex").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg.sizes, cfg.hookCounts, cfg.listCounts, cfg.pairs = []int{50, 60}, []int{2}, []int{2}, 1
	cfg.cacheDir, cfg.outDir = filepath.Join(dir, "cache"), filepath.Join(dir, "results")
	res, err := run(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, r := range res.Rows {
		ops = append(ops, fmt.Sprintf("%s@%d", r.Op, r.Files))
	}
	if got, want := strings.Join(ops, ","), "start@50,hook (2 envs)@50,complete identities (2 envs)@50,list (2 envs)@50,path@50,start (warm slot)@60"; got != want {
		t.Errorf("quick rows %s, want %s", got, want)
	}
}

// Command bench measures git-apex against plain git doing the same job,
// side by side: each operation runs git-apex and its baseline alternately
// (A B A B, after a warm-up pair) on generated repositories, and reports
// medians and the median of the per-pair ratios. Only ratios measured in
// one interleaved run are comparable: the machine's speed drifts.
//
// Run it with `make bench` (bench/run). Settings come from the environment:
//
//	BENCH_QUICK  1: only the key rows (start, path, --version, hook and list
//	             with 100 envs at the first size, pooled start at the others), in minutes
//	BENCH_SIZES  repository sizes, default "1k,10k"; "100k" is opt-in (minutes to make);
//	             a quick run with BENCH_SIZES=1k leaves out the pooled start
//	BENCH_SLOTS  repository sizes of the batch task acquire_ms and reset_ms
//	             rows, default "1k,20k" (the 20k repository takes a minute or two to make, once)
//	BENCH_HOOKS  env counts of the hook rows, default "100,500"
//	BENCH_LISTS  env counts of the list rows, default "10,100,500"
//	BENCH_PAIRS  timed pairs per row, default 5
//	BENCH_GC     1 adds the gc row (50 fresh worktrees a run: minutes)
//	BENCH_LOAD   seconds of the GET /healthz load (64 clients), default 10
//	BENCH_CACHE  where generated repositories are kept,
//	             default $XDG_CACHE_HOME/git-apex-bench
//	BENCH_OUT    where the JSON results go, default bench/results
//	BENCH_ENGINES two or more Docker contexts: adds the copy-mode start row
//	             and the warm-container batch row (on the default engine),
//	             and the batch over those engines
//	BENCH_ONLY   "engines": only those three rows, at the first size;
//	             "slots": only the acquire_ms and reset_ms rows
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	apex := flag.String("apex", "", "the git-apex binary to measure (git-apex-engine beside it, for the API rows)")
	empty := flag.String("empty", "", "an empty Go program, the --version row's baseline (bench/run builds one)")
	flag.Parse()
	cfg, err := configFromEnv(*apex)
	if *empty != "" {
		cfg.empty, _ = filepath.Abs(*empty)
	}
	if err == nil {
		_, err = run(cfg, os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// config is one harness run.
type config struct {
	apex        string // git-apex binary
	empty       string // an empty Go program; "": no --version row
	quick       bool   // only the key rows
	sizes       []int  // files per generated repository; the first is used for the rows that need many envs
	slotSizes   []int  // files of the repositories the acquire_ms and reset_ms rows run on
	pairs       int
	listCounts  []int // env counts for the list rows
	hookCounts  []int // env counts for the hook rows
	mergeEnvs   int   // envs for the merge-with-hooks row
	mergeFrom   int   // the smallest size the merge-with-hooks row runs at
	gcEnvs      int   // envs for the gc row; 0 leaves it out
	batchTasks  int   // tasks in the batch row
	apiEnvs     int   // envs for the GET /worktrees row
	loadClients int   // keep-alive clients of the healthz load
	loadTime    time.Duration
	cacheDir    string
	outDir      string
	engines     []string // Docker contexts for the engine rows; none leaves them out
	onlyEngines bool     // only the engine rows, at the first size
	onlySlots   bool     // only the acquire_ms and reset_ms rows
}

func configFromEnv(apex string) (config, error) {
	if apex == "" {
		return config{}, fmt.Errorf("-apex BINARY is required (bench/run builds one)")
	}
	apex, err := filepath.Abs(apex)
	if err != nil {
		return config{}, err
	}
	cfg := config{apex: apex, pairs: 5, listCounts: []int{10, 100, 500}, hookCounts: []int{100, 500}, mergeEnvs: 100, mergeFrom: 10000,
		batchTasks: 20, apiEnvs: 100, loadClients: 64, loadTime: 10 * time.Second, outDir: filepath.Join("bench", "results")}
	sizes := os.Getenv("BENCH_SIZES")
	if sizes == "" {
		sizes = "1k,10k"
	}
	if cfg.sizes, err = numbers("BENCH_SIZES", sizes, parseSize); err != nil {
		return cfg, err
	}
	slots := os.Getenv("BENCH_SLOTS")
	if slots == "" {
		slots = "1k,20k"
	}
	if cfg.slotSizes, err = numbers("BENCH_SLOTS", slots, parseSize); err != nil {
		return cfg, err
	}
	count := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("bad count %q: use a whole number of at least 1", s)
		}
		return n, nil
	}
	if v := os.Getenv("BENCH_HOOKS"); v != "" {
		if cfg.hookCounts, err = numbers("BENCH_HOOKS", v, count); err != nil {
			return cfg, err
		}
	}
	if v := os.Getenv("BENCH_LISTS"); v != "" {
		if cfg.listCounts, err = numbers("BENCH_LISTS", v, count); err != nil {
			return cfg, err
		}
	}
	if os.Getenv("BENCH_QUICK") == "1" {
		cfg.quick, cfg.slotSizes, cfg.hookCounts, cfg.listCounts = true, nil, []int{100}, []int{100}
	}
	if p := os.Getenv("BENCH_PAIRS"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("BENCH_PAIRS=%q: want a whole number of at least 1", p)
		}
		cfg.pairs = n
	}
	if l := os.Getenv("BENCH_LOAD"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 600 {
			return cfg, fmt.Errorf("BENCH_LOAD=%q: want a number of seconds from 1 to 600", l)
		}
		cfg.loadTime = time.Duration(n) * time.Second
	}
	if os.Getenv("BENCH_GC") == "1" {
		cfg.gcEnvs = 50
	}
	cfg.cacheDir = os.Getenv("BENCH_CACHE")
	if cfg.cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return cfg, err
		}
		cfg.cacheDir = filepath.Join(base, "git-apex-bench")
	}
	if e := os.Getenv("BENCH_ENGINES"); e != "" {
		cfg.engines = strings.Split(e, ",")
	}
	switch os.Getenv("BENCH_ONLY") {
	case "engines":
		if len(cfg.engines) == 0 {
			return cfg, fmt.Errorf("BENCH_ONLY=engines needs BENCH_ENGINES")
		}
		cfg.onlyEngines, cfg.sizes, cfg.slotSizes = true, cfg.sizes[:1], nil
	case "slots":
		cfg.onlySlots, cfg.sizes = true, nil
	}
	if out := os.Getenv("BENCH_OUT"); out != "" {
		cfg.outDir = out
	}
	return cfg, nil
}

// numbers reads a comma-separated list of values with parse.
func numbers(name, list string, parse func(string) (int, error)) ([]int, error) {
	var ns []int
	for _, s := range strings.Split(list, ",") {
		n, err := parse(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// parseSize reads "1k", "10k", "100k" or a plain number of files.
func parseSize(s string) (int, error) {
	mult := 1
	if n, ok := strings.CutSuffix(s, "k"); ok {
		s, mult = n, 1000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("bad size %q in BENCH_SIZES: use 1k, 10k, 100k or a number of files", s)
	}
	return n * mult, nil
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/batch"
	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/repo"
)

func batchCommand() *cli.Command {
	return &cli.Command{
		Name:      "batch",
		Usage:     "run many tasks in parallel, each in its own isolated place",
		UsageText: "git apex batch [--parallelism N] [--isolation worktree|full|shared|auto] [--engines CTX,...] [--strict | --fallback] [--results FILE] [--keep-failed] <tasks.toml>",
		Description: "Reads [[task]] tables (id, repo, base, setup, files, run, timeout) and runs them N at a time, in warm " +
			"pool slots (worktree) or one at a time in the main checkout (shared; auto picks shared when N is 1). One JSON " +
			"line per task goes to --results (default stdout) as it finishes; each task's output goes to its own log. " +
			"Exits 0 when all passed, 1 when any failed, 130 when interrupted (129 by SIGHUP, 131 by SIGQUIT, 141 when the results' reader went away; running tasks get TERM, then KILL, and a line " +
			"saying interrupted; tasks not started get one saying skipped; every slot is released). Slots stay in the pool, clean. --engines (or [batch].engines) spreads the tasks over Docker " +
			"contexts, N at a time on each, in containers; a task whose engine stops answering runs once more on another.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "parallelism", Aliases: []string{"j"}, Value: 1, Usage: "run `N` tasks at a time"},
			&cli.StringFlag{Name: "isolation", Value: "auto", Usage: "worktree, full, shared or auto"},
			&cli.StringFlag{Name: "results", Usage: "write the JSON lines to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "keep-failed", Usage: "keep a failed task's slot as a preserved environment"},
			&cli.BoolFlag{Name: "strict", Usage: "with --isolation full or --engines, fail (exit 6) rather than leave out an engine that does not answer"},
			&cli.BoolFlag{Name: "fallback", Usage: "with --isolation full, run the tasks in worktree slots on the host when no container can be had (without it: exit 6)"},
			&cli.StringFlag{Name: "engines", Usage: "spread the tasks over these Docker contexts (`CTX,...`), N at a time on each"},
		},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<tasks.toml>")
			if err != nil {
				return err
			}
			if c.Int("parallelism") < 1 {
				return cmdline.UsageError(c, "--parallelism must be 1 or more")
			}
			if c.Bool("fallback") && (c.String("isolation") != "full" || c.Bool("strict") || c.String("engines") != "") {
				return cmdline.UsageError(c, "--fallback lets --isolation full fall back to worktree slots: it takes --isolation full, without --strict or --engines")
			}
			tasks, err := batch.Load(args[0])
			if err != nil {
				return err
			}
			// Its results' reader going away interrupts it (exit 141) rather
			// than killing it with tasks still running.
			hostexec.SurviveBrokenPipes()
			results := c.App.Writer
			if name := c.String("results"); name != "" {
				f, err := os.Create(name)
				if err != nil {
					return err
				}
				defer f.Close()
				results = f
			}
			return withRepo(c, func(r *repo.Repo) error {
				opts := batch.Options{
					Parallelism: c.Int("parallelism"), Isolation: c.String("isolation"), KeepFailed: c.Bool("keep-failed"), Strict: c.Bool("strict"), Fallback: c.Bool("fallback"),
					Results: results, Progress: c.App.ErrWriter, ProgressTTY: isTerminal(os.Stderr),
					LogDir: filepath.Join(r.Git.ApexDir(), "batch", time.Now().Format("20060102-150405.000")),
				}
				if names := c.String("engines"); names != "" {
					opts.Engines = strings.Split(names, ",")
				} else if iso := c.String("isolation"); iso == "full" || iso == "auto" {
					pol, err := r.Policy()
					if err != nil {
						return err
					}
					opts.Engines = pol.Batch.Engines
				}
				res, err := batch.Run(c.Context, r, tasks, opts)
				if err != nil {
					return err
				}
				failed := 0
				for _, task := range res {
					if task.Status != "passed" {
						failed++
					}
				}
				if failed > 0 {
					return exitcode.New(exitcode.Failure, "%d of %d tasks failed", failed, len(tasks))
				}
				return nil
			})
		},
	}
}

package main

import (
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/service"
)

func closeCommand() *cli.Command {
	return &cli.Command{
		Name:      "close",
		Usage:     "end a work item: drop its identity, and remove its environment once nothing uses it",
		UsageText: "git apex close [--force] [--kill] [--json] <identity>",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "remove it as remove --force does, its uncommitted work kept in the trash"},
			cmdline.KillFlag, jsonFlag},
		Description: "An environment that no identity uses any more is removed when that is safe; " +
			"one with uncommitted work is kept as preserved, with the reason, and the identity keeps naming it until it is removed; " +
			"--force removes it, its work kept in the trash. A process working in it refuses the close (exit 3, nothing changed) unless --kill.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			return withService(c, func(s *service.Service) error {
				end, err := s.Close(c.Context, args[0], service.EndOptions{Cwd: cwd, Force: c.Bool("force"), Kill: c.Bool("kill")})
				if err != nil {
					return err
				}
				if len(end.StillUsedBy) > 0 {
					note(c, "closed %s; its environment stays, used by %s", args[0], strings.Join(end.StillUsedBy, ", "))
					return printIfJSON(c, end)
				}
				return reportEnding(c, "closed "+args[0], end)
			})
		},
	}
}

func finishCommand() *cli.Command {
	return &cli.Command{
		Name:      "finish",
		Usage:     "end an environment's lifecycle: clean up on success, keep it on failure",
		UsageText: "git apex finish [--failed] [--kill] [--json] <identity>",
		Description: "On success the environment is removed when [worktree].cleanup_on_complete (default true). " +
			"With --failed it is kept as preserved, and its path printed, when [worktree].preserve_on_failure (default true). " +
			"A cleanup that is refused or fails only warns: finish still succeeds; " +
			"but a process working in the environment refuses it (exit 3, nothing changed) unless --kill.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "failed", Usage: "the work failed: keep the environment for inspection"},
			cmdline.KillFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			return withService(c, func(s *service.Service) error {
				end, err := s.Finish(c.Context, args[0], c.Bool("failed"), service.EndOptions{Cwd: cwd, Kill: c.Bool("kill")})
				if err != nil {
					return err
				}
				return reportEnding(c, "finished "+args[0], end)
			})
		},
	}
}

// reportEnding says what close or finish did; a kept env's path goes to
// stdout, for inspection (with --json, the ending).
func reportEnding(c *cli.Context, what string, end *service.Ending) error {
	for _, line := range cmdline.EndingNotes(what, end) {
		note(c, "%s", line)
	}
	if end.Outcome == service.Preserved && !c.Bool("json") {
		return printLine(c, end.Env.Path)
	}
	return printIfJSON(c, end)
}

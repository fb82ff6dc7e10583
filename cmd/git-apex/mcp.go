package main

import (
	"github.com/urfave/cli/v2"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the Model Context Protocol on stdin and stdout, for coding agents",
		UsageText: "git apex mcp [--repo DIR]...",
		Description: "Tools: start, list, exec, changes, remove, finish, link and log, on the repository of the current " +
			"directory (when it is in one), every --repo, and the repositories of the client's roots; a call names one " +
			"with `repository`, else works on the first. Register it with an agent as the command `git apex mcp` (the " +
			"README shows how).",
		Flags:  []cli.Flag{&cli.StringSliceFlag{Name: "repo", Usage: "serve the repository at `DIR` too (repeatable)"}},
		Action: mcpAction,
	}
}

package main

import (
	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/mcptools"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the Model Context Protocol on stdin and stdout, for coding agents",
		UsageText: "git apex mcp",
		Description: "Tools: start, list, exec, changes, remove, finish, link and log, on the repository of the current " +
			"directory. Register it with an agent as the command `git apex mcp` (the README shows how).",
		Action: func(c *cli.Context) error {
			if _, err := positional(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			return mcptools.Serve(c.Context, ".", appVersion(), repoOptions(c))
		},
	}
}

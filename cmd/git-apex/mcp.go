package main

import (
	"github.com/urfave/cli/v2"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the Model Context Protocol on stdin and stdout, for coding agents",
		UsageText: "git apex mcp",
		Description: "Tools: start, list, exec, changes, remove, finish, link and log, on the repository of the current " +
			"directory. Register it with an agent as the command `git apex mcp` (the README shows how).",
		Action: mcpAction,
	}
}

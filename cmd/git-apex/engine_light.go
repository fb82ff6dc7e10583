//go:build !engine

package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostexec"
)

// serve and mcp are the engine's: this build leaves the servers out, so
// that every other command starts without them.
var serveAction, mcpAction cli.ActionFunc = runEngine, runEngine

// runEngine replaces this process with the engine, given the same
// arguments.
func runEngine(c *cli.Context) error {
	err := hostexec.Replace(engineName, os.Args[1:])
	if errors.Is(err, hostexec.ErrNotFound) {
		return exitcode.New(exitcode.Failure, "%s serve and mcp need %s, which is not beside %s nor on PATH: ./install.sh installs both",
			c.App.HelpName, engineName, os.Args[0])
	}
	return err
}

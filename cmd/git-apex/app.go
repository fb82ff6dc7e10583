package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/repo"
	"github.com/git-apex/git-apex/service"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// engineName is the engine build of git-apex (engine.go, -tags engine),
// installed beside it: serve and mcp run it.
const engineName = "git-apex-engine"

// optionalCommands are commands that only some builds have.
var optionalCommands []*cli.Command

// newApp defines the command line. Its commands live one per file.
func newApp() *cli.App {
	app := &cli.App{
		Name:      "git-apex",
		HelpName:  "git apex",
		Usage:     "give every unit of work its own isolated place to work",
		UsageText: "git apex [--policy FILE] [--color WHEN] <command> [flags] [arguments]",
		Description: "git-apex makes, tracks and cleans up environments for units of work: a git worktree on its own branch, " +
			"a worktree inside a container, or a branch in the main checkout, as the repository's .apex.toml decides. " +
			"Environments are recorded in apex/state.db inside the repository's common git directory.\n\n" +
			"Exit codes: 0 success; 1 unexpected failure; 2 usage error (bad flags, invalid identity, unknown workflow, " +
			"not in a git working tree, no commits); 3 refused to protect work (dirty, unmerged, in use, branch held); " +
			"4 invalid policy; 5 git failed; 6 container runtime unavailable where required; 7 no such environment; " +
			"124 a command stopped at its timeout (MCP's exec); 126 exec's command cannot be run; 127 exec's command not found; 129 interrupted by SIGHUP; 130 interrupted (SIGINT, SIGTERM); 131 interrupted by SIGQUIT; 141 batch's results' reader went away.",
		Version: cmdline.Version(version),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "policy", Usage: "read the policy from `FILE` instead of the main checkout's .apex.toml", EnvVars: []string{"GIT_APEX_POLICY"}},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour output: `WHEN` is auto (on a terminal, unless NO_COLOR), always or never"},
		},
		Before: func(c *cli.Context) error {
			if _, err := cmdline.UseColour(c.String("color"), "", os.Stdout); err != nil {
				return cmdline.UsageError(c, "%v", err)
			}
			return nil
		},
		Commands: []*cli.Command{
			initCommand(),
			startCommand(),
			pathCommand(),
			listCommand(),
			removeCommand(),
			restoreCommand(),
			linkCommand(),
			unlinkCommand(),
			closeCommand(),
			finishCommand(),
			logCommand(),
			execCommand(),
			shellCommand(),
			syncCommand(),
			openCommand(),
			trustCommand(),
			gcCommand(),
			poolCommand(),
			batchCommand(),
			serveCommand(),
			mcpCommand(),
			doctorCommand(),
			hooksCommand(),
			hookCommand(),
			cdCommand(),
			shellInitCommand(),
			completionCommand(),
			completeCommand(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cmdline.UsageError(c, "unknown command %q", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		// Exit codes are mapped once, in main: cli must not exit by itself.
		ExitErrHandler: func(*cli.Context, error) {},
		Writer:         os.Stdout,
		ErrWriter:      os.Stderr,
	}
	app.Commands = append(app.Commands, optionalCommands...)
	cmdline.HandleUsageErrors(app)
	return app
}

// commandArgs names the commands whose arguments end in a command line
// of its own, and how many arguments come before it: `exec ID ls -la`
// passes -la to ls.
var commandArgs = map[string]int{"exec": 1}

// withRepo opens the repository of the current directory, runs fn with
// it, and closes it.
func withRepo(c *cli.Context, fn func(*repo.Repo) error) error {
	r, err := repo.Open(c.Context, ".", repoOptions(c))
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r)
}

// withService is withRepo for the commands of the service layer: those
// that the HTTP API and MCP offer too. A request's bad field (a flag or
// an argument) comes back as a usage error naming the help to read.
func withService(c *cli.Context, fn func(*service.Service) error) error {
	err := withRepo(c, func(r *repo.Repo) error { return fn(service.New(r)) })
	var fe *service.FieldError
	if errors.As(err, &fe) {
		return cmdline.UsageError(c, "%v", fe.Err)
	}
	return err
}

// clock stamps the state's records: nil, the real clock, except in the
// script tests, which set it (see testClock).
var clock func() time.Time

// repoOptions are the global flags, as the repo package takes them.
func repoOptions(c *cli.Context) repo.Options {
	policyFile := c.String("policy")
	if policyFile != "" {
		if abs, err := filepath.Abs(policyFile); err == nil {
			policyFile = abs
		}
	}
	return repo.Options{PolicyFile: policyFile, Stderr: c.App.ErrWriter, Clock: clock}
}

// note prints a human message on stderr.
func note(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, format+"\n", args...)
}

package main

import (
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/service"
)

func execCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a command in an environment and exit with its exit code",
		UsageText: "git apex exec <identity> -- <command> [args...]",
		Description: "In a full environment the command runs inside its container (started again if it stopped, " +
			"made again if it was deleted); otherwise in its worktree. Its stdout and stderr stay apart, stdin is " +
			"passed, and Ctrl-C stops it. It gets a terminal when stdin and stdout are one.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 2, 1<<20, "<identity> -- <command> [args...]")
			if err != nil {
				return err
			}
			return runIn(c, args[0], args[1:], false)
		},
	}
}

func shellCommand() *cli.Command {
	return &cli.Command{
		Name:        "shell",
		Usage:       "open an interactive shell in an environment",
		UsageText:   "git apex shell <identity>",
		Description: "$SHELL in the worktree; in a full environment, [container].shell (default /bin/sh) inside its container.",
		Action: func(c *cli.Context) error {
			args, err := cmdline.Positional(c, 1, 1, "<identity>")
			if err != nil {
				return err
			}
			return runIn(c, args[0], nil, false)
		},
	}
}

// runIn runs argv (a shell when nil) in an env with this process's
// standard streams, and passes its exit code on; host runs it on the
// host even in a full env.
func runIn(c *cli.Context, identity string, argv []string, host bool) error {
	return withService(c, func(s *service.Service) error {
		return runWith(c, s, service.ExecRequest{Identity: identity, Cmd: argv, Host: host})
	})
}

// runWith runs req with this process's standard streams, a terminal when
// stdin and stdout are one, and passes the exit code on. The terminal is
// left as it is: a command on the host shares it, and the container
// adapter alone makes it raw while it relays it to a full env.
func runWith(c *cli.Context, s *service.Service, req service.ExecRequest) error {
	req.TTY = isTerminal(os.Stdin) && isTerminal(os.Stdout)
	req.Stdin, req.Stdout, req.Stderr = os.Stdin, os.Stdout, os.Stderr
	code, err := s.Exec(c.Context, req)
	if err != nil {
		return err
	}
	if code != 0 {
		return exitcode.Status(code)
	}
	return nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

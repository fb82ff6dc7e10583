// Command git-apex gives every unit of work its own isolated place to
// work: a git worktree, a worktree in a container, or a branch in the main
// checkout, as the repository's .apex.toml decides. Run it as `git apex`.
package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/git-apex/git-apex/cmdline"
	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostexec"
)

func main() {
	os.Exit(run(os.Args))
}

// run runs the command line and returns the exit code.
func run(args []string) int {
	ctx, stop := hostexec.SignalContext(context.Background())
	defer stop()
	app := newApp()
	err := app.RunContext(ctx, cmdline.FlagsFirst(app, args, commandArgs))
	if err == nil {
		return exitcode.OK
	}
	if msg := cmdline.Failure(ctx, err); msg != "" {
		fmt.Fprintf(os.Stderr, "git-apex: %s\n", msg)
	}
	if ctx.Err() != nil {
		return interruptedCode(hostexec.Interruption())
	}
	return exitcode.Of(err)
}

// interruptedCode is the exit code of a command that sig interrupted:
// 129 for SIGHUP and 131 for SIGQUIT (128+n, as a shell says), 130 for
// SIGINT and SIGTERM alike.
func interruptedCode(sig syscall.Signal) int {
	switch sig {
	case syscall.SIGHUP:
		return exitcode.Hangup
	case syscall.SIGQUIT:
		return exitcode.Quit
	}
	return exitcode.Interrupted
}

// Package hostexec runs the processes git-apex starts on the host that
// are not git (gitx runs git): the policy's setup and lifecycle commands,
// exec and shell in a worktree, batch tasks, and the pool's background
// top-up. One behaviour for all of them:
//
//   - a command runs in a process group of its own, so that stopping it
//     stops what it started too, unless it is Foreground (an interactive
//     command that must stay in the terminal's foreground group: the
//     terminal's own signals, Ctrl-C, Ctrl-\, Ctrl-Z and a change of
//     size, reach it as they would without git-apex, which waits for it
//     and never ends it for a key typed there);
//   - at its timeout or when ctx ends it gets Stop (SIGTERM by default;
//     the whole group unless Foreground), then SIGKILL after Grace: the
//     whole group again, should any of it outlive the command itself;
//   - its exit status is its exit code, 128+n when signal n ended it, and
//     -1 when it could not be started.
//
// It also tells whether a process named by PID and start time still runs,
// and finds processes: those left of a process group (Group), those that
// use a directory (Users), and, in one pass, those of a place by either
// or by a mark in their environment (Find).
package hostexec

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// DefaultGrace is how long a stopped command has to end before SIGKILL.
const DefaultGrace = 5 * time.Second

// Command is one process to run.
type Command struct {
	Argv           []string
	Dir            string
	Env            []string
	Stdin          io.Reader // nil: no input
	Stdout, Stderr io.Writer // nil: discarded
	Timeout        time.Duration
	Stop           syscall.Signal // sent first when it must stop; 0: SIGTERM
	Grace          time.Duration  // between Stop and SIGKILL; 0: DefaultGrace
	// Foreground keeps the command in git-apex's own process group, as an
	// interactive command on a terminal needs; Stop then goes to it alone.
	// While it runs in the terminal's foreground, git-apex ignores the
	// SIGINT and SIGQUIT the terminal sends (see SignalContext).
	Foreground bool
	// Started, when set, is told the command's process group once it
	// runs (not called for a Foreground command, which has none).
	Started func(Group)
}

// Run runs c to its end, its timeout or the end of ctx, and returns its
// exit status. When it was stopped, err is ctx.Err() (or
// context.DeadlineExceeded for the timeout), with the status it ended
// with; when it could not be started, the status is -1.
func Run(ctx context.Context, c Command) (int, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	if !c.Foreground {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	if c.Foreground {
		defer holdTerminal()()
	} else if c.Started != nil {
		c.Started(GroupOf(cmd.Process.Pid))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return Status(err), nil
	case <-ctx.Done():
	}
	stop, grace := c.Stop, c.Grace
	if stop == 0 {
		stop = syscall.SIGTERM
	}
	if grace == 0 {
		grace = DefaultGrace
	}
	signal := func(sig syscall.Signal) {
		if c.Foreground {
			cmd.Process.Signal(sig)
		} else {
			syscall.Kill(-cmd.Process.Pid, sig)
		}
	}
	signal(stop)
	kill := time.After(grace)
	var err error
	select {
	case err = <-done:
	case <-kill:
		signal(syscall.SIGKILL)
		err = <-done
		kill = nil
	}
	if !c.Foreground && kill != nil {
		endGroup(cmd.Process.Pid, kill)
	}
	return Status(err), ctx.Err()
}

// endGroup waits until the process group pgid, whose leader has ended, has
// no process left, and sends it SIGKILL when kill fires before: a process
// of the group that outlives its leader (one that traps TERM) is ended
// too.
func endGroup(pgid int, kill <-chan time.Time) {
	for groupRuns(pgid) {
		select {
		case <-kill:
			syscall.Kill(-pgid, syscall.SIGKILL)
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Status is the exit status a finished command's error says: 0, its
// exit code, 128+n when signal n ended it, or -1 when it never ran.
func Status(err error) int {
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return -1
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exit.ExitCode()
}

// Detach starts argv in dir in the background, in a session of its own
// and with no input or output, and does not wait for it: it outlives the
// command that started it, holding none of its terminal or pipes.
func Detach(argv []string, dir string, env []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

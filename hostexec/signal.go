package hostexec

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// interrupts is the channel SignalContext hears SIGINT and SIGTERM on;
// nil before it is called.
var interrupts struct {
	sync.Mutex
	ch chan os.Signal
}

// SignalContext returns a copy of parent that ends at git-apex's first
// SIGINT or SIGTERM, as signal.NotifyContext does, except while a
// Foreground command runs in the terminal's foreground (see Run): a key
// typed there (Ctrl-C, Ctrl-\) signals that command too, and it alone
// decides what happens, as under a shell.
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	interrupts.Lock()
	interrupts.ch = ch
	interrupts.Unlock()
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		interrupts.Lock()
		interrupts.ch = nil
		interrupts.Unlock()
		cancel()
	}
}

// holdTerminal makes git-apex ignore the terminal's SIGINT and SIGQUIT
// while a command it started in its own process group runs in the
// terminal's foreground, as a shell does while it waits for a job: the
// command gets them, and git-apex waits for it and passes its status on.
// It is called once the command runs, which must not inherit the
// ignoring. It returns what hears them again.
func holdTerminal() (release func()) {
	interrupts.Lock()
	ch := interrupts.ch
	interrupts.Unlock()
	if ch == nil || !inForeground() {
		return func() {}
	}
	quit := !signal.Ignored(syscall.SIGQUIT)
	signal.Ignore(os.Interrupt, syscall.SIGQUIT)
	return func() {
		if quit {
			signal.Reset(syscall.SIGQUIT)
		}
		signal.Notify(ch, os.Interrupt)
	}
}

// inForeground tells whether git-apex's process group is the foreground
// one of its controlling terminal: the group that keys typed there signal.
func inForeground() bool {
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return false
	}
	defer tty.Close()
	group, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGPGRP)
	return err == nil && group == syscall.Getpgrp()
}

package hostexec

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// interrupts is the channel SignalContext hears the signals that end
// git-apex's work on (nil before it is called), the terminal's among them
// (SIGINT, and SIGQUIT unless it was ignored), and the first one heard.
var interrupts struct {
	sync.Mutex
	ch       chan os.Signal
	terminal []os.Signal
	got      syscall.Signal
}

// SignalContext returns a copy of parent that ends at git-apex's first
// SIGINT, SIGTERM, SIGHUP (its terminal closed, its ssh connection
// dropped) or SIGQUIT (Ctrl-\), as signal.NotifyContext does, so that a
// long command ends its work cleanly on each; Interruption tells which it
// was. SIGHUP and SIGQUIT are left ignored when git-apex was started with
// them ignored (nohup). The exception: while a Foreground command runs in
// the terminal's foreground (see Run), a key typed there (Ctrl-C, Ctrl-\)
// signals that command too, and it alone decides what happens, as under a
// shell.
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 1)
	heard := []os.Signal{os.Interrupt, syscall.SIGTERM}
	terminal := []os.Signal{os.Interrupt}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		if !signal.Ignored(sig) {
			heard = append(heard, sig)
			if sig == syscall.SIGQUIT {
				terminal = append(terminal, sig)
			}
		}
	}
	signal.Notify(ch, heard...)
	interrupts.Lock()
	interrupts.ch, interrupts.terminal, interrupts.got = ch, terminal, 0
	interrupts.Unlock()
	go func() {
		select {
		case sig := <-ch:
			interrupts.Lock()
			interrupts.got, _ = sig.(syscall.Signal)
			interrupts.Unlock()
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

// SurviveBrokenPipes keeps git-apex alive when it writes to a pipe with no
// reader on its stdout or stderr: the write returns EPIPE instead of
// SIGPIPE killing it (as Go does by default for those two), so that a
// command with work under way (batch) can end it cleanly; the writer
// decides what a failed write means. Commands started afterwards still
// get SIGPIPE's default.
func SurviveBrokenPipes() {
	// Never read: a full channel drops the signal, which only needs to be
	// handled for writes to return EPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// Interruption is the signal that ended SignalContext's context; 0 when
// none did.
func Interruption() syscall.Signal {
	interrupts.Lock()
	defer interrupts.Unlock()
	return interrupts.got
}

// holdTerminal makes git-apex ignore the terminal's SIGINT and SIGQUIT
// while a command it started in its own process group runs in the
// terminal's foreground, as a shell does while it waits for a job: the
// command gets them, and git-apex waits for it and passes its status on.
// It is called once the command runs, which must not inherit the
// ignoring. It returns what hears them again.
func holdTerminal() (release func()) {
	interrupts.Lock()
	ch, terminal := interrupts.ch, interrupts.terminal
	interrupts.Unlock()
	if ch == nil || !inForeground() {
		return func() {}
	}
	signal.Ignore(os.Interrupt, syscall.SIGQUIT)
	return func() { signal.Notify(ch, terminal...) }
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

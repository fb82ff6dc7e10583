package hostexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStatuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		argv []string
		want int
	}{
		{[]string{"true"}, 0},
		{[]string{"sh", "-c", "exit 7"}, 7},
		{[]string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM)},
	} {
		if got, err := Run(ctx, Command{Argv: tc.argv}); got != tc.want || err != nil {
			t.Errorf("%q: %d, %v; want %d", tc.argv, got, err, tc.want)
		}
	}
	if got, err := Run(ctx, Command{Argv: []string{filepath.Join(t.TempDir(), "no-such-command")}}); got != -1 || err == nil {
		t.Errorf("a command that cannot start: %d, %v", got, err)
	}
}

// TestTimeoutStopsTheGroup runs a shell whose child ignores nothing and
// sleeps: at the timeout the whole group goes, the child too, and Run
// says the deadline passed.
func TestTimeoutStopsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	code, err := Run(context.Background(), Command{
		Argv:    []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; wait"},
		Timeout: 200 * time.Millisecond, Grace: time.Second,
	})
	if !errors.Is(err, context.DeadlineExceeded) || code != 128+int(syscall.SIGTERM) {
		t.Fatalf("Run = %d, %v; want 143 and the deadline", code, err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, c := range string(data) {
		if c >= '0' && c <= '9' {
			pid = pid*10 + int(c-'0')
		}
	}
	// The child was signalled with its group: gone, or a zombie waiting
	// for whoever adopted it to reap it.
	for i := 0; i < 100 && running(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if running(pid) {
		t.Errorf("the command's child %d outlived the timeout", pid)
	}
}

// running reports whether a process exists and is not a zombie.
func running(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z'
}

// TestStopThenKill: a command that ignores the stop signal is killed
// after the grace period.
func TestStopThenKill(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	code, err := Run(ctx, Command{Argv: []string{"sh", "-c", "trap '' INT; sleep 300"}, Foreground: true,
		Stop: syscall.SIGINT, Grace: 200 * time.Millisecond})
	if !errors.Is(err, context.Canceled) || code != 128+int(syscall.SIGKILL) {
		t.Fatalf("Run = %d, %v; want 137 and Canceled", code, err)
	}
}

// TestStopEndsTheWholeGroup: the command ends at TERM, but a process it
// started traps TERM; it is killed with the group after the grace, not
// left running once the command is gone.
func TestStopEndsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for i := 0; i < 3000; i++ {
			if data, err := os.ReadFile(pidFile); err == nil && len(data) > 0 && data[len(data)-1] == '\n' {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	code, err := Run(ctx, Command{
		Argv:  []string{"sh", "-c", "sh -c 'trap \"\" TERM; while :; do sleep 1; done' & echo $! > " + pidFile + "; wait"},
		Grace: 300 * time.Millisecond,
	})
	if !errors.Is(err, context.Canceled) || code != 128+int(syscall.SIGTERM) {
		t.Fatalf("Run = %d, %v; want 143 and Canceled", code, err)
	}
	data, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	for i := 0; i < 3000 && running(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if running(pid) {
		t.Errorf("process %d of the command's group, which traps TERM, outlived the stop", pid)
	}
}

// TestSignalContext sends this process SIGTERM: the context ends.
func TestSignalContext(t *testing.T) {
	ctx, stop := SignalContext(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("SIGTERM did not end the context")
	}
}

// A process that was killed but not yet reaped (a zombie: its parent died
// with it, or has not waited yet) no longer runs: an intent or a lease it
// left is recovered now, not once init gets to it.
func TestZombieIsNotAlive(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, start := cmd.Process.Pid, startTime(cmd.Process.Pid)
	if !Alive(pid, start) {
		t.Fatalf("sleep %d, running, is not alive", pid)
	}
	cmd.Process.Kill()
	for i := 0; Alive(pid, start); i++ { // dead once the kernel has handled the kill
		if i == 600 {
			t.Fatalf("sleep %d, killed and not reaped, is alive after a minute", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("sleep %d was reaped before the check (%v): the test proves nothing", pid, err)
	}
	cmd.Wait()
}

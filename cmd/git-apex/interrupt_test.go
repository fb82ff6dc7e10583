package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"os/exec"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdInterrupt runs a command as a terminal runs a foreground job: in a
// session and process group of its own, with the signals at their
// defaults. Once N files match GLOB (within 2 minutes) it sends SIGNAL
// (INT or TERM) to the whole group, as a key typed on the terminal does,
// or, with -alone, to the group's git-apex process alone; with
// -signalled FILE, it then makes FILE, for a process of the command that
// waits until the signal was sent. It fails unless the command then
// exits CODE (128+n when signal n ended it, as a shell says). The
// command's output is the stdout and stderr to check after:
//
//	interrupt 130 INT $WORK/started-* 2 git apex batch -j 2 tasks.toml
func cmdInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	alone, signalled := false, ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-alone":
			alone, args = true, args[1:]
		case args[0] == "-signalled" && len(args) > 1:
			signalled, args = ts.MkAbs(args[1]), args[2:]
		default:
			ts.Fatalf("interrupt: unknown option %s", args[0])
		}
	}
	if neg || len(args) < 5 {
		ts.Fatalf("usage: interrupt [-alone] [-signalled FILE] CODE INT|TERM GLOB N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	sig, ok := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM}[args[1]]
	if !ok {
		ts.Fatalf("interrupt: signal %q: INT or TERM", args[1])
	}
	n, err := strconv.Atoi(args[3])
	ts.Check(err)
	cmd := exec.Command(args[4], args[5:]...)
	cmd.Dir, cmd.Env = ts.MkAbs("."), append(scriptEnv(ts), "WORK="+ts.Getenv("WORK"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	ts.Check(cmd.Start())
	group := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Not timing: the ceilings only turn a hang into a failure.
	giveUp := func(why string) {
		syscall.Kill(-group, syscall.SIGKILL)
		<-done
		ts.Fatalf("interrupt: %s\nstdout:\n%s\nstderr:\n%s", why, stdout.String(), stderr.String())
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if matches, _ := filepath.Glob(ts.MkAbs(args[2])); len(matches) >= n {
			break
		}
		if time.Now().After(deadline) {
			giveUp("no " + args[3] + " files match " + args[2] + " within 2 minutes")
		}
	}
	target := -group
	if alone {
		if target = groupMember(group, "git-apex"); target == 0 {
			giveUp("no git-apex process in the command's group")
		}
	}
	ts.Check(syscall.Kill(target, sig))
	if signalled != "" {
		ts.Check(os.WriteFile(signalled, nil, 0o644))
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		giveUp("the command did not end within 2 minutes of the signal")
	}
	io.WriteString(ts.Stdout(), stdout.String())
	io.WriteString(ts.Stderr(), stderr.String())
	status := cmd.ProcessState.Sys().(syscall.WaitStatus)
	got := status.ExitStatus()
	if status.Signaled() {
		got = 128 + int(status.Signal())
	}
	if got != want {
		ts.Fatalf("%s exited %d after SIG%s, want %d", strings.Join(args[4:], " "), got, args[1], want)
	}
}

// groupMember is the PID of the process named name in the process group
// pgid; 0 when there is none.
func groupMember(pgid int, name string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if got, err := syscall.Getpgid(pid); err == nil && got == pgid && strings.TrimSpace(string(comm)) == name {
			return pid
		}
	}
	return 0
}

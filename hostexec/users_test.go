//go:build linux

package hostexec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphan starts script in sh in dir and returns the PID it prints: a
// background process whose parent has exited, so it is not one of this
// test's descendants (which Users leaves out). It is killed when the
// test ends.
func orphan(t *testing.T, dir, script string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script+" >/dev/null 2>&1 & echo $!")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	// Wait until it has become sleep, its directories and files set.
	for i := 0; i < 500; i++ {
		if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.TrimSpace(string(comm)) == "sleep" {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d did not become sleep", pid)
	return 0
}

// TestUsers finds, in one scan, a process by its working directory and
// one by a file it holds open, each under its own directory only (not
// under a sibling whose name starts the same); leaves out this test's own
// child; and End ends them.
func TestUsers(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwdEnv, fileEnv, sibling, idle := filepath.Join(root, "env"), filepath.Join(root, "env-files"), filepath.Join(root, "en"), filepath.Join(root, "idle")
	for _, d := range []string{filepath.Join(cwdEnv, "sub"), fileEnv, sibling, idle} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(fileEnv, "log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	inCwd := orphan(t, filepath.Join(cwdEnv, "sub"), "exec sleep 1000")
	holding := orphan(t, root, "exec sleep 1000 3>>"+filepath.Join(fileEnv, "log"))
	child := exec.Command("sleep", "1000")
	child.Dir = idle
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()

	found := Users([]string{cwdEnv, fileEnv, sibling, idle})
	if got := found[cwdEnv]; len(got) != 1 || got[0].PID != inCwd || got[0].Command != "sleep" {
		t.Errorf("users of %s = %v, want process %d (sleep)", cwdEnv, got, inCwd)
	}
	if got := found[fileEnv]; len(got) != 1 || got[0].PID != holding {
		t.Errorf("users of %s = %v, want process %d, which holds a file there", fileEnv, got, holding)
	}
	if got := found[sibling]; len(got) != 0 {
		t.Errorf("users of %s = %v, want none", sibling, got)
	}
	if got := found[idle]; len(got) != 0 {
		t.Errorf("users of %s = %v, want none: this test's own child is left out", idle, got)
	}
	if want := "process " + strconv.Itoa(inCwd) + " (sleep)"; Describe(found[cwdEnv]) != want {
		t.Errorf("Describe = %q, want %q", Describe(found[cwdEnv]), want)
	}

	if err := End(append(found[cwdEnv], found[fileEnv]...), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if left := Users([]string{cwdEnv, fileEnv}); len(left) != 0 {
		t.Errorf("after End, users = %v, want none", left)
	}
}

// TestEndKills: a process that ignores SIGTERM is killed after the grace.
func TestEndKills(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pid := orphan(t, dir, "trap '' TERM; exec sleep 1000")
	found := Users([]string{dir})[dir]
	if len(found) != 1 || found[0].PID != pid {
		t.Fatalf("users = %v, want process %d", found, pid)
	}
	if err := End(found, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !ended(found[0]) {
		t.Errorf("process %d still runs after End", pid)
	}
}

// TestUsersLeavesOtherMounts: a process in another mount namespace (a
// container's, which ends with its container) is not counted, though
// its directory is the one asked about.
func TestUsersLeavesOtherMounts(t *testing.T) {
	if exec.Command("unshare", "--mount", "true").Run() != nil {
		t.Skip("unshare --mount is not permitted here")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pid := orphan(t, dir, "exec unshare --mount sleep 1000")
	if link, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); link != dir {
		t.Fatalf("process %d works in %q, want %s", pid, link, dir)
	}
	if found := UsersOf(dir); len(found) != 0 {
		t.Errorf("users of %s = %v, want none: the process is in another mount namespace", dir, found)
	}
}

// TestGroupMembers runs a command in a group of its own whose leader
// leaves a child in the background and exits: Members still finds the
// child by the group the leader named, and a record of the group with a
// later start time (a reused ID) finds nothing.
func TestGroupMembers(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	var g Group
	code, err := Run(context.Background(), Command{
		Argv:    []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile},
		Started: func(started Group) { g = started },
	})
	if code != 0 || err != nil || g.ID == 0 || g.Start == 0 {
		t.Fatalf("Run = %d, %v; group %+v", code, err, g)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	members := g.Members()
	if len(members) != 1 || members[0].PID != child {
		t.Fatalf("Members = %v; want the child %d alone", members, child)
	}
	if later := (Group{ID: g.ID, Start: members[0].start + 1}); len(later.Members()) != 0 {
		t.Errorf("a group recorded as started after its members has %v", later.Members())
	}
	if err := End(members, time.Second); err != nil {
		t.Fatal(err)
	}
	if left := g.Members(); len(left) != 0 {
		t.Errorf("after End, Members = %v", left)
	}
}

// TestFindMark: Find finds, by its mark, a process that left the traced
// directory for / in a session of its own, and this test's own child
// (which Dir leaves out: a mark is a task's, whoever started it); a
// process with another mark, or none, is not found; a process that works
// in another traced directory is found by Dir in the same pass, under
// that trace only.
func TestFindMark(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	const mark = "GIT_APEX_TEST_MARK=slot-1"
	away := orphan(t, "/", "exec env "+mark+" setsid sleep 1000")
	orphan(t, "/", "exec env GIT_APEX_TEST_MARK=slot-10 setsid sleep 1000")
	orphan(t, "/", "exec setsid sleep 1000")
	inOther := orphan(t, other, "exec sleep 1000")
	child := exec.Command("sleep", "1000")
	child.Env = append(os.Environ(), mark)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()

	found := Find([]Trace{{Dir: filepath.Join(dir, "slot"), Mark: mark}, {Dir: other}})
	if got := found[0]; len(got) != 2 || got[0].PID != min(away, child.Process.Pid) || got[1].PID != max(away, child.Process.Pid) {
		t.Errorf("marked = %v, want processes %d and %d (a child is found by its mark)", got, away, child.Process.Pid)
	}
	if got := found[1]; len(got) != 1 || got[0].PID != inOther {
		t.Errorf("users of %s = %v, want process %d", other, got, inOther)
	}
}

// TestUsersExe: a process whose program lies in the directory (a dev
// server built there and run by its path from elsewhere: its working
// directory and open files are not there) uses it, also once the program
// file is deleted.
func TestUsersExe(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	program, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin", "sleep")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, program, 0o755); err != nil {
		t.Fatal(err)
	}
	pid := orphan(t, "/", "exec "+bin+" 1000 </dev/null")
	if found := UsersOf(dir); len(found) != 1 || found[0].PID != pid {
		t.Errorf("users of %s = %v, want process %d, which runs %s", dir, found, pid, bin)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if found := UsersOf(dir); len(found) != 1 || found[0].PID != pid {
		t.Errorf("users of %s once its program is deleted = %v, want process %d", dir, found, pid)
	}
}

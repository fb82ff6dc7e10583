package hostexec

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// find is Find's one pass over /proc, on traces whose Dir is resolved.
// For each process it reads only what some trace asks about: its stat
// (for a Group), its environ (for a Mark), and the links of its cwd,
// root, exe and fd/* (for a Dir).
func find(traces []Trace) [][]Process {
	found := make([][]Process, len(traces))
	self := os.Getpid()
	skip := map[int]bool{self: true}
	for pid := parent(self); pid > 1 && !skip[pid]; pid = parent(pid) {
		skip[pid] = true // the processes that started git-apex
	}
	mounts, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return found
	}
	proc, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return found
	}
	defer unix.Close(proc)
	// Most links lead nowhere near a dir: those outside the directory all
	// dirs share are passed over at once.
	common, groups, marks := "", false, false
	for _, t := range traces {
		switch {
		case t.Dir == "":
		case common == "":
			common = t.Dir
		default:
			for !within(t.Dir, common) {
				common = filepath.Dir(common)
			}
		}
		groups, marks = groups || t.Group.ID > 0, marks || t.Mark != ""
	}
	buf, environ := make([]byte, unix.PathMax), make([]byte, 0, 1<<16)
	// /proc is read a few entries at a time (a small buffer), in PID
	// order, each looked at as it is read: a process started during the
	// pass (by one forking as it is ended) mostly has a higher PID than
	// those read yet, and is then found too.
	dirents := make([]byte, 512)
	var names []string
	for {
		n, err := unix.Getdents(proc, dirents)
		if err != nil || n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(dirents[:n], -1, names[:0])
		for _, name := range names {
			if p, hits := inspect(name, traces, skip, self, mounts, common, groups, marks, buf, &environ); len(hits) > 0 {
				for i, task := range hits {
					p.task = task
					found[i] = append(found[i], p)
				}
			}
		}
	}
	return found
}

// inspect is find's look at one entry of /proc: the process, and for each
// trace it is found by, whether by Mark or Group (true) or by Dir only.
func inspect(name string, traces []Trace, skip map[int]bool, self int, mounts, common string, groups, marks bool, buf []byte, environ *[]byte) (Process, map[int]bool) {
	pid, err := strconv.Atoi(name)
	if err != nil || skip[pid] {
		return Process{}, nil
	}
	hit := map[int]bool{}
	if groups {
		inGroup(pid, traces, hit)
	}
	if marks {
		*environ = readAll("/proc/"+name+"/environ", (*environ)[:0])
		for i, t := range traces {
			if t.Mark != "" && holds(*environ, t.Mark) {
				hit[i] = true
			}
		}
	}
	if common != "" {
		used := map[int]bool{}
		links(name, mounts, buf, func(target string) {
			if !within(target, common) {
				return // a socket, pipe or anonymous file, or elsewhere
			}
			for i, t := range traces {
				if t.Dir != "" && !hit[i] && within(target, t.Dir) {
					used[i] = true
				}
			}
		})
		if len(used) > 0 && !descends(pid, self) {
			for i := range used {
				hit[i] = false
			}
		}
	}
	if len(hit) == 0 {
		return Process{}, nil
	}
	fields := stat(pid)
	if len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return Process{}, nil // gone, or a zombie
	}
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	group, _ := strconv.Atoi(fields[2])
	comm, _ := os.ReadFile("/proc/" + name + "/comm")
	return Process{PID: pid, Command: strings.TrimSpace(string(comm)), start: start, group: group}, hit
}

// inGroup marks in hit the traces whose Group process pid is a member of:
// in the group, started no earlier than its leader, not a zombie.
func inGroup(pid int, traces []Trace, hit map[int]bool) {
	fields := stat(pid)
	if len(fields) < 20 || fields[0] == "Z" || fields[0] == "X" {
		return
	}
	pgid, _ := strconv.Atoi(fields[2])
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	for i, t := range traces {
		if t.Group.ID > 0 && t.Group.ID == pgid && start >= t.Group.Start {
			hit[i] = true
		}
	}
}

// readAll reads the file name into buf (grown as needed); empty when it
// cannot be read (gone, or not this user's to read).
func readAll(name string, buf []byte) []byte {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf[:0]
	}
	defer unix.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err != nil {
			return buf[:0]
		}
		if n <= 0 {
			return buf
		}
		buf = buf[:len(buf)+n]
	}
}

// holds reports whether environ, a process's NUL-separated environment,
// holds the setting mark.
func holds(environ []byte, mark string) bool {
	for len(environ) > 0 {
		kv, rest, _ := bytes.Cut(environ, []byte{0})
		if string(kv) == mark {
			return true
		}
		environ = rest
	}
	return false
}

// links calls check with the target of each link of process pid (its
// cwd, root, exe and fd/*) when it is in the mount namespace mounts; buf is
// scratch space. The links in fd/, most of a scan's (about 1,500 on a
// busy machine), are read relative to that directory, opened once, so the
// kernel does not walk /proc/PID/fd again for each.
func links(pid, mounts string, buf []byte, check func(target string)) {
	read := func(dir int, name string) (string, bool) {
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", false // gone, or not ours to read
		}
		return string(buf[:n]), true
	}
	base := "/proc/" + pid + "/"
	if ns, ok := read(unix.AT_FDCWD, base+"ns/mnt"); !ok || ns != mounts {
		return // not ours to inspect, or a container's
	}
	// exe is the program it runs: a dev server built in the worktree and
	// run by its path from elsewhere uses it through that alone (once the
	// file is deleted, the link ends in " (deleted)", still under it).
	for _, name := range []string{"cwd", "root", "exe"} {
		if target, ok := read(unix.AT_FDCWD, base+name); ok {
			check(target)
		}
	}
	fds, err := unix.Open(base+"fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return // gone
	}
	defer unix.Close(fds)
	var names []string
	for {
		n, err := unix.Getdents(fds, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names) // copies the names out of buf
	}
	for _, name := range names {
		if target, ok := read(fds, name); ok {
			check(target)
		}
	}
}

// stat is the fields of /proc/PID/stat after the command name (which, in
// parentheses, may hold spaces): the state is [0], the parent [1], the
// start time [19].
func stat(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// parent is a process's parent's PID, 0 when unknown.
func parent(pid int) int {
	fields := stat(pid)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// descends reports whether pid was started by ancestor, directly or not.
func descends(pid, ancestor int) bool {
	for seen := 0; pid > 1 && seen < 1000; seen++ {
		if pid = parent(pid); pid == ancestor {
			return true
		}
	}
	return false
}

// ended reports whether p no longer runs: gone, its PID another
// process's, or a zombie (which holds no directory) its parent has not
// reaped yet.
func ended(p Process) bool {
	return startTime(p.PID) != p.start
}

// ownGroups are the process groups of git-apex and of the processes
// that started it, as a set.
func ownGroups() map[int]bool {
	own := map[int]bool{syscall.Getpgrp(): true}
	for pid := parent(os.Getpid()); pid > 1; pid = parent(pid) {
		if fields := stat(pid); len(fields) > 2 {
			g, _ := strconv.Atoi(fields[2])
			own[g] = true
		}
	}
	return own
}

// isStopped reports whether p is stopped (by a signal, or traced), or
// no longer runs.
func isStopped(p Process) bool {
	fields := stat(p.PID)
	if len(fields) < 20 {
		return true
	}
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	switch fields[0] {
	case "T", "t", "Z", "X":
		return true
	}
	return start != p.start
}

// groupRuns reports whether a process of the process group pgid still
// runs: a zombie (which PID 1 may take its time to reap) does not count.
func groupRuns(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	group := strconv.Itoa(pgid)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if fields := stat(pid); len(fields) > 2 && fields[2] == group && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}

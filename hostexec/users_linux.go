package hostexec

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// users is Users's one pass over /proc: for each process, the links of
// its cwd, root and fd/*, compared with every dir.
func users(dirs []string) map[string][]Process {
	self := os.Getpid()
	skip := map[int]bool{self: true}
	for pid := parent(self); pid > 1 && !skip[pid]; pid = parent(pid) {
		skip[pid] = true // the processes that started git-apex
	}
	mounts, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	// Most links lead nowhere near an env: those outside the directory
	// all dirs share are passed over at once.
	common := dirs[0]
	for _, d := range dirs[1:] {
		for !within(d, common) {
			common = filepath.Dir(common)
		}
	}
	found, buf := map[string][]Process{}, make([]byte, unix.PathMax)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || skip[pid] {
			continue
		}
		used := map[string]bool{}
		links(e.Name(), mounts, buf, func(target string) {
			if !within(target, common) {
				return // a socket, pipe or anonymous file, or elsewhere
			}
			for _, d := range dirs {
				if within(target, d) {
					used[d] = true
				}
			}
		})
		if len(used) == 0 || descends(pid, self) {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		p := Process{PID: pid, Command: strings.TrimSpace(string(comm)), start: startTime(pid)}
		for d := range used {
			found[d] = append(found[d], p)
		}
	}
	return found
}

// links calls check with the target of each link of process pid (its
// cwd, root and fd/*) when it is in the mount namespace mounts; buf is
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
	for _, name := range []string{"cwd", "root"} {
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

// members is Group.Members's pass over /proc: each process's group and
// start time, from its stat.
func members(g Group) []Process {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fields := stat(pid)
		if len(fields) < 20 || fields[2] != strconv.Itoa(g.ID) || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		start, _ := strconv.ParseInt(fields[19], 10, 64)
		if start < g.Start {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		found = append(found, Process{PID: pid, Command: strings.TrimSpace(string(comm)), start: start})
	}
	return found
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

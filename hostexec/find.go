package hostexec

import (
	"os"
	"path/filepath"
	"sort"

	"github.com/git-apex/git-apex/hostpath"
)

// A Trace is what to look for of one place's processes (see Find):
//
//   - Dir: those that use it (their working directory, their root, their
//     program or an open file is there), as Users finds them; "" for none;
//   - Mark: those whose environment holds it, a NAME=value setting
//     git-apex gave a command: every process the command starts inherits
//     it, in a session of its own or after a double fork too, unless it
//     clears its environment; "" for none;
//   - Group: the members of that process group (see Members); the zero
//     Group for none.
type Trace struct {
	Dir   string
	Mark  string
	Group Group
}

// Find finds, in one pass over the processes of this machine, those each
// of traces names: found[i] are traces[i]'s, by PID. Of those found by
// Dir only, it leaves out what Users does; git-apex itself and the
// processes that started it are never found, nor zombies. A process is
// found by Mark in any mount namespace (one that called unshare is still
// a task's), where this user may read its environment. On Linux it reads
// /proc; elsewhere it finds only the leader of each Group, while it runs.
func Find(traces []Trace) [][]Process {
	real := make([]Trace, len(traces))
	copy(real, traces)
	dirs := make([]string, 0, len(traces))
	for _, t := range traces {
		if t.Dir != "" {
			dirs = append(dirs, t.Dir)
		}
	}
	resolved := realPaths(dirs)
	for i, j := 0, 0; i < len(real); i++ {
		if real[i].Dir != "" {
			real[i].Dir, j = resolved[j], j+1
		}
	}
	found := find(real)
	for _, procs := range found {
		sort.Slice(procs, func(i, j int) bool { return procs[i].PID < procs[j].PID })
	}
	return found
}

// realPaths is dirs with links resolved. Envs share their parent
// directory: it is resolved once.
func realPaths(dirs []string) []string {
	real, parents := make([]string, len(dirs)), map[string]string{}
	for i, d := range dirs {
		parent := filepath.Dir(d)
		if _, ok := parents[parent]; !ok {
			parents[parent] = hostpath.RealPath(parent)
		}
		real[i] = filepath.Join(parents[parent], filepath.Base(d))
		if info, err := os.Lstat(real[i]); err == nil && info.Mode()&os.ModeSymlink != 0 {
			real[i] = hostpath.RealPath(real[i])
		}
	}
	return real
}

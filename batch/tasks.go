// Package batch runs many tasks in parallel, each in its own isolated
// place: a warm pool slot (worktree), a slot with a container (full), or
// the main checkout (shared, one at a time). It streams progress, writes
// one JSON line per task, and on an interrupt stops the tasks, releases
// every slot and reports what finished.
package batch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/policy"
)

// Task is one [[task]] of a tasks file.
type Task struct {
	ID      string            `toml:"id"`
	Repo    string            `toml:"repo"`    // another repository (path or URL); "" for this one
	Base    string            `toml:"base"`    // commit-ish; "" for the base branch
	Setup   []string          `toml:"setup"`   // commands run as sh -c before run
	Files   map[string]string `toml:"files"`   // path -> content, written before run
	Run     []string          `toml:"run"`     // the command, as an argument list
	Timeout policy.Duration   `toml:"timeout"` // 0: none
}

// Load reads a tasks file strictly: an unknown key, a missing id or run,
// a duplicate id, or a file path that leaves the slot is a usage error.
func Load(path string) ([]Task, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.New(exitcode.Usage, "cannot read the tasks file: %v", err)
	}
	var doc struct {
		Task []Task `toml:"task"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, exitcode.New(exitcode.Usage, "invalid tasks file %s: %v", path, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return nil, exitcode.New(exitcode.Usage, "invalid tasks file %s: unknown key %q", path, undecoded[0].String())
	}
	seen := map[string]bool{}
	for i, t := range doc.Task {
		bad := func(format string, args ...any) error {
			return exitcode.New(exitcode.Usage, "invalid tasks file %s: task %d (%q): %s", path, i+1, t.ID, fmt.Sprintf(format, args...))
		}
		if _, err := policy.NewIdentity("task", t.ID); err != nil {
			return nil, bad("its id must be a valid name: %v", errors.Unwrap(err))
		}
		if seen[t.ID] {
			return nil, bad("the id is used twice")
		}
		seen[t.ID] = true
		if len(t.Run) == 0 {
			return nil, bad("it has no run command")
		}
		for name := range t.Files {
			if clean := filepath.Clean(name); filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || clean == ".git" || strings.HasPrefix(clean, ".git/") {
				return nil, bad("file %q must stay inside the task's directory", name)
			}
		}
	}
	if len(doc.Task) == 0 {
		return nil, exitcode.New(exitcode.Usage, "the tasks file %s has no [[task]]", path)
	}
	return doc.Task, nil
}

// Package intent keeps the crash records of starts, removals and
// restores. An intent is written, under the repository lock, before a
// start, a removal or a restore changes anything on disk, and deleted
// once the state database has the record of what was done (a restore's:
// once its files are back and its trash entry dropped). A process killed
// in between (kill -9, a power cut) leaves its intent behind, naming its
// PID; `git apex doctor --fix` then undoes the start, finishes the
// removal, and finishes or undoes the restore (see the doctor package).
// This package only writes, reads and deletes the records.
package intent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-apex/git-apex/hostexec"
)

// Intent is a start, a removal or a restore about to change the disk.
type Intent struct {
	Op        string `json:"op"` // "start", "remove" or "restore"
	Identity  string `json:"identity"`
	Path      string `json:"path"`
	Branch    string `json:"branch,omitempty"`
	NewBranch bool   `json:"new_branch,omitempty"` // start, restore: the branch is made by it, at Start
	Start     string `json:"start,omitempty"`      // start: the commit it starts from; restore: the commit it makes Branch at
	// Trash is, on a restore, the ref of the trash entry it puts back.
	Trash string `json:"trash,omitempty"`
	Base  string `json:"base,omitempty"` // start: the env's base branch
	// Engine is, on a start in full isolation, the record of the engine
	// its container is made on (container.Endpoint.Record).
	Engine string `json:"engine,omitempty"`
	// DeleteBranch is set on a removal that deletes the branch (checked
	// before the intent was written).
	DeleteBranch bool `json:"delete_branch,omitempty"`
	// Force is set on a removal that discards uncommitted work; Kept when
	// it kept some in the trash (before the intent was written).
	// Shared is set on a start in shared isolation, which switches the
	// main checkout (Path) from FromBranch ("" when detached) at
	// FromHead to Target, the commit of Branch (or of no branch, when
	// Branch is "").
	Shared     bool   `json:"shared,omitempty"`
	FromBranch string `json:"from_branch,omitempty"`
	FromHead   string `json:"from_head,omitempty"`
	Target     string `json:"target,omitempty"`
	Force      bool   `json:"force,omitempty"`
	Kept       bool   `json:"kept,omitempty"`
	PID        int    `json:"pid"`
	PIDStart   int64  `json:"pid_start"`

	file string // where it is written
}

// Dir is where a repository's intents are written, given its apex
// directory.
func Dir(apexDir string) string { return filepath.Join(apexDir, "intents") }

// Write records in as this process's in dir, before it acts on it.
func Write(dir string, in *Intent) error {
	in.PID, in.PIDStart = hostexec.Self()
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	in.file = filepath.Join(dir, in.Op+"-"+in.Identity+".json")
	tmp := in.file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, in.file)
}

// Done deletes an intent once its record is written (or its work undone).
func (in *Intent) Done() {
	if in != nil && in.file != "" {
		os.Remove(in.file)
	}
}

// Failed leaves the intent for doctor --fix to finish (Done then keeps
// it): its operation failed half way, with err (a worktree whose
// deletion began), which it returns saying so.
func (in *Intent) Failed(err error) error {
	in.file = ""
	return fmt.Errorf("%w; `git apex doctor --fix` finishes it", err)
}

// HalfWritten are the intents in dir whose writing was cut short: their
// process was killed before it changed anything.
func HalfWritten(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	return files
}

// Orphans are the intents in dir whose process is gone.
func Orphans(dir string) ([]*Intent, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Intent
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		in := &Intent{file: file}
		if err := json.Unmarshal(data, in); err != nil {
			return nil, fmt.Errorf("cannot read %s: %w; remove it by hand", file, err)
		}
		if hostexec.Alive(in.PID, in.PIDStart) {
			continue // its process still runs
		}
		out = append(out, in)
	}
	return out, nil
}

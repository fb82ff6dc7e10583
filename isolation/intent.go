package isolation

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// An intent is written, under the repository lock, before a start or a
// removal changes anything on disk, and deleted once the state database
// has the record of what was done. A process killed in between (kill -9,
// a power cut) leaves its intent behind, naming its PID; `git apex doctor
// --fix` then undoes the start or finishes the removal (see recover).
type intent struct {
	Op        string `json:"op"` // "start" or "remove"
	Identity  string `json:"identity"`
	Path      string `json:"path"`
	Branch    string `json:"branch,omitempty"`
	NewBranch bool   `json:"new_branch,omitempty"` // start: the branch is made by it, at Start
	Start     string `json:"start,omitempty"`      // start: the commit it starts from
	// DeleteBranch is set on a removal that deletes the branch (checked
	// before the intent was written).
	DeleteBranch bool `json:"delete_branch,omitempty"`
	// Force is set on a removal that discards uncommitted work.
	Force    bool  `json:"force,omitempty"`
	PID      int   `json:"pid"`
	PIDStart int64 `json:"pid_start"`

	file string // where it is written
}

// intentDir is where intents are written.
func (m *Manager) intentDir() string { return filepath.Join(m.Git.ApexDir(), "intents") }

// writeIntent records in as this process's, before it acts on it.
func (m *Manager) writeIntent(in *intent) error {
	in.PID, in.PIDStart = holder()
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.intentDir(), 0o755); err != nil {
		return err
	}
	in.file = filepath.Join(m.intentDir(), in.Op+"-"+in.Identity+".json")
	tmp := in.file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, in.file)
}

// done deletes an intent once its record is written (or its work undone).
func (in *intent) done() {
	if in != nil && in.file != "" {
		os.Remove(in.file)
	}
}

// orphanIntents are the intents whose process is gone.
func (m *Manager) orphanIntents() ([]*intent, error) {
	entries, err := os.ReadDir(m.intentDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*intent
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		file := filepath.Join(m.intentDir(), e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		in := &intent{file: file}
		if err := json.Unmarshal(data, in); err != nil {
			return nil, fmt.Errorf("cannot read %s: %w; remove it by hand", file, err)
		}
		if in.PID != 0 && processStart(in.PID) == in.PIDStart {
			continue // its process still runs
		}
		out = append(out, in)
	}
	return out, nil
}

package pool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/hostexec"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/words"
)

// Report is `git apex pool status`: the slots and their totals.
type Report struct {
	Total     int          `json:"total"`
	Available int          `json:"available"` // idle, ready to lease
	Leased    int          `json:"leased"`    // held by a running process
	Waiting   int          `json:"waiting"`   // processes waiting for a slot
	Slots     []SlotStatus `json:"slots"`
}

// SlotStatus is one slot in a Report.
type SlotStatus struct {
	Path      string     `json:"path"`
	Commit    string     `json:"commit"`
	Status    string     `json:"status"` // idle or leased
	HolderPID int        `json:"holder_pid,omitempty"`
	LeasedAt  *time.Time `json:"leased_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	// WarmContainer is the id of the idle slot's warm container, on the
	// engine WarmEngine names ("": the repository's own).
	WarmContainer string `json:"warm_container,omitempty"`
	WarmEngine    string `json:"warm_engine,omitempty"`
}

// Report is the pool's slots and totals.
func (p *Pool) Report(ctx context.Context) (report *Report, reclaimed int, err error) {
	slots, reclaimed, err := p.Status(ctx)
	if err != nil {
		return nil, reclaimed, err
	}
	r := &Report{Total: len(slots), Waiting: p.waiters(), Slots: []SlotStatus{}}
	for _, s := range slots {
		v := SlotStatus{Path: s.Path, Commit: s.PoolCommit, Status: "idle", CreatedAt: state.Stamp(s.CreatedAt)}
		if s.Warm.Container != "" {
			v.WarmContainer, v.WarmEngine = s.Warm.Container, s.Warm.Engine
		}
		if s.Leased() {
			t := state.Stamp(s.LeasedAt)
			v.Status, v.HolderPID, v.LeasedAt = "leased", s.HolderPID, &t
			r.Leased++
		} else {
			r.Available++
		}
		r.Slots = append(r.Slots, v)
	}
	return r, reclaimed, nil
}

// A process waiting for a slot marks it with a file named after it (PID
// and start time) in waitDir, removed when it stops waiting; a file
// whose process is gone is not counted, and is removed.
func (p *Pool) waitDir() string { return filepath.Join(p.r.Git.ApexDir(), "pool-waiting") }

func (p *Pool) markWaiting(pid int, start int64) string {
	if err := os.MkdirAll(p.waitDir(), 0o755); err != nil {
		return ""
	}
	name := filepath.Join(p.waitDir(), fmt.Sprintf("%d-%d", pid, start))
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		return ""
	}
	return name
}

func (p *Pool) waiters() int {
	entries, _ := os.ReadDir(p.waitDir())
	n := 0
	for _, e := range entries {
		var pid int
		var start int64
		if _, err := fmt.Sscanf(e.Name(), "%d-%d", &pid, &start); err == nil && hostexec.Alive(pid, start) {
			n++
		} else {
			os.Remove(filepath.Join(p.waitDir(), e.Name()))
		}
	}
	return n
}

// stillLeased is the refusal of `pool drain --all` while running
// processes hold slots: their tasks' work is never deleted under them.
func stillLeased(slots []*state.Slot) error {
	var holders []string
	for _, s := range slots {
		if s.Leased() {
			holders = append(holders, fmt.Sprintf("pid %d (%s)", s.HolderPID, s.Path))
		}
	}
	if len(holders) == 0 {
		return nil
	}
	return exitcode.New(exitcode.Refused, "%s still leased by running processes: %s; let them finish, or stop them, then drain again",
		words.Count(len(holders), "slot"), strings.Join(holders, ", "))
}

package pool

import (
	"fmt"
	"strings"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/state"
	"github.com/git-apex/git-apex/words"
)

// Report is `git apex pool status`: the slots and their totals.
type Report struct {
	Total     int          `json:"total"`
	Available int          `json:"available"` // idle, ready to lease
	Leased    int          `json:"leased"`    // held by a running process
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
}

// NewReport is the report of slots.
func NewReport(slots []*state.Slot) *Report {
	r := &Report{Total: len(slots), Slots: []SlotStatus{}}
	for _, s := range slots {
		v := SlotStatus{Path: s.Path, Commit: s.PoolCommit, Status: "idle", CreatedAt: state.Stamp(s.CreatedAt)}
		if s.Leased() {
			t := state.Stamp(s.LeasedAt)
			v.Status, v.HolderPID, v.LeasedAt = "leased", s.HolderPID, &t
			r.Leased++
		} else {
			r.Available++
		}
		r.Slots = append(r.Slots, v)
	}
	return r
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

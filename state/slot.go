package state

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Slot is a warm worktree of the pool.
type Slot struct {
	ID          int64
	Path        string
	PoolCommit  string // the commit an idle slot is at
	HolderPID   int    // 0 when idle
	HolderStart int64  // the holder's process start time, to tell a reused PID apart
	LeasedAt    time.Time
	CreatedAt   time.Time
	Warm        Warm // its warm container; zero: none
	// TaskGroup and TaskStart name the process group a task of the holder
	// runs in there (its leader's PID and start time); 0: none recorded.
	TaskGroup int
	TaskStart int64
}

// Warm is a container made ahead for a slot at its pool commit, for a
// batch task to take.
type Warm struct {
	Engine    string // the Docker context it is on; "": the repository's own engine
	Container string // its id
	Spec      string // the fingerprint of the policy and engine it was made for
}

// Leased reports whether a process holds the slot.
func (s *Slot) Leased() bool { return s.HolderPID != 0 }

const slotColumns = `id, path, pool_commit, holder_pid, holder_start, leased_at, created_at, warm_engine, warm_container, warm_spec, task_pgid, task_start`

func scanSlot(row scanner) (*Slot, error) {
	var s Slot
	var leased, created int64
	if err := row.Scan(&s.ID, &s.Path, &s.PoolCommit, &s.HolderPID, &s.HolderStart, &leased, &created,
		&s.Warm.Engine, &s.Warm.Container, &s.Warm.Spec, &s.TaskGroup, &s.TaskStart); err != nil {
		return nil, err
	}
	if leased != 0 {
		s.LeasedAt = time.UnixMilli(leased)
	}
	s.CreatedAt = time.UnixMilli(created)
	return &s, nil
}

// SlotTable is a store's table of the warm pool's slots.
type SlotTable struct{ s *Store }

// Pool is the store's table of the warm pool's slots.
func (s *Store) Pool() SlotTable { return SlotTable{s} }

// All lists the pool's slots, oldest first.
func (t SlotTable) All(ctx context.Context) ([]*Slot, error) {
	return queryAll(ctx, t.s.db, scanSlot, `SELECT `+slotColumns+` FROM slots ORDER BY id`)
}

// Add records a new slot, leased to the given holder (pid 0: idle).
func (t SlotTable) Add(ctx context.Context, path, commit string, pid int, start int64) (*Slot, error) {
	now := t.s.now().UnixMilli()
	var sl *Slot
	err := t.s.write(ctx, func(tx *sql.Tx) error {
		leased := int64(0)
		if pid != 0 {
			leased = now
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO slots (path, pool_commit, holder_pid, holder_start, leased_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, path, commit, pid, start, leased, now)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		sl, err = scanSlot(tx.QueryRowContext(ctx, `SELECT `+slotColumns+` FROM slots WHERE id = ?`, id))
		return err
	})
	return sl, err
}

// Lease gives an idle slot to a holder, in one write transaction so two
// processes never hold one slot: one without a warm container, or with
// anyWarm, if there is none such, one with. It returns nil when none is
// idle.
func (t SlotTable) Lease(ctx context.Context, pid int, start int64, anyWarm bool) (*Slot, error) {
	where := `warm_container = ''`
	if anyWarm {
		where = `1`
	}
	return t.lease(ctx, pid, start, where+` ORDER BY warm_container != '', id`)
}

// LeaseWarm gives a holder an idle slot whose warm container is on engine
// and made for spec; nil when none is idle.
func (t SlotTable) LeaseWarm(ctx context.Context, pid int, start int64, engine, spec string) (*Slot, error) {
	return t.lease(ctx, pid, start, `warm_container != '' AND warm_engine = ? AND warm_spec = ? ORDER BY id`, engine, spec)
}

// LeaseSlot gives a holder the slot id if it is idle; nil when it is not.
func (t SlotTable) LeaseSlot(ctx context.Context, pid int, start int64, id int64) (*Slot, error) {
	return t.lease(ctx, pid, start, `id = ?`, id)
}

// lease gives a holder the first idle slot that where (a condition and
// an order) picks.
func (t SlotTable) lease(ctx context.Context, pid int, start int64, where string, args ...any) (*Slot, error) {
	var sl *Slot
	err := t.s.write(ctx, func(tx *sql.Tx) error {
		var err error
		sl, err = scanSlot(tx.QueryRowContext(ctx, `SELECT `+slotColumns+` FROM slots WHERE holder_pid = 0 AND `+where+` LIMIT 1`, args...))
		if errors.Is(err, sql.ErrNoRows) {
			sl = nil
			return nil
		}
		if err != nil {
			return err
		}
		now := t.s.now()
		if _, err := tx.ExecContext(ctx, `UPDATE slots SET holder_pid = ?, holder_start = ?, leased_at = ? WHERE id = ?`,
			pid, start, now.UnixMilli(), sl.ID); err != nil {
			return err
		}
		sl.HolderPID, sl.HolderStart, sl.LeasedAt = pid, start, now
		return nil
	})
	return sl, err
}

// SetWarm records a slot's warm container (the zero Warm: none).
func (t SlotTable) SetWarm(ctx context.Context, id int64, w Warm) error {
	return t.s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE slots SET warm_engine = ?, warm_container = ?, warm_spec = ? WHERE id = ?`,
			w.Engine, w.Container, w.Spec, id)
		return err
	})
}

// Takeover gives a holder the slot id if the holder named by pid and
// start (one that died) still holds it, in one write transaction: of
// processes reclaiming a dead holder's slot at once, one gets it, and the
// others nil. The task group recorded stays, for the new holder to end.
func (t SlotTable) Takeover(ctx context.Context, id int64, deadPID int, deadStart int64, pid int, start int64) (*Slot, error) {
	var sl *Slot
	err := t.s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE slots SET holder_pid = ?, holder_start = ?, leased_at = ?
			WHERE id = ? AND holder_pid = ? AND holder_start = ?`, pid, start, t.s.now().UnixMilli(), id, deadPID, deadStart)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		sl, err = scanSlot(tx.QueryRowContext(ctx, `SELECT `+slotColumns+` FROM slots WHERE id = ?`, id))
		return err
	})
	return sl, err
}

// SetTask records the process group a task runs in, in a leased slot.
func (t SlotTable) SetTask(ctx context.Context, id int64, pgid int, start int64) error {
	return t.s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE slots SET task_pgid = ?, task_start = ? WHERE id = ?`, pgid, start, id)
		return err
	})
}

// Free makes a slot idle at commit, with no task group recorded.
func (t SlotTable) Free(ctx context.Context, id int64, commit string) error {
	return t.s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE slots SET holder_pid = 0, holder_start = 0, leased_at = 0, task_pgid = 0, task_start = 0,
			pool_commit = ? WHERE id = ?`, commit, id)
		return err
	})
}

// Drop forgets a slot (removed, or turned into an env).
func (t SlotTable) Drop(ctx context.Context, id int64) error {
	return t.s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM slots WHERE id = ?`, id)
		return err
	})
}

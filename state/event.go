package state

import (
	"context"
	"database/sql"
	"time"
)

// Event is one line of the event log.
type Event struct {
	ID       int64
	At       time.Time
	EnvID    int64 // 0 when the event concerns no env
	Identity string
	Kind     string // created, removed, fallback, healed, moved, ...
	Detail   string
}

func addEvent(ctx context.Context, tx *sql.Tx, at time.Time, e *Env, kind, detail string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events (at, env_id, identity, kind, detail) VALUES (?, ?, ?, ?, ?)`,
		at.UnixMilli(), e.ID, e.Identity, kind, detail)
	return err
}

// Events returns the log, oldest first; only identity's when it is not "".
func (s *Store) Events(ctx context.Context, identity string) ([]Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, coalesce(env_id, 0), identity, kind, detail
		FROM events WHERE ? = '' OR identity = ? ORDER BY id`, identity, identity)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var ev Event
		var at int64
		if err := rows.Scan(&ev.ID, &at, &ev.EnvID, &ev.Identity, &ev.Kind, &ev.Detail); err != nil {
			return nil, err
		}
		ev.At = time.UnixMilli(at)
		events = append(events, ev)
	}
	return events, rows.Err()
}

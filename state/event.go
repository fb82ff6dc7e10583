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
	return addEventFor(ctx, tx, at, e.ID, e.Identity, kind, detail)
}

func addEventFor(ctx context.Context, tx *sql.Tx, at time.Time, envID int64, identity, kind, detail string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events (at, env_id, identity, kind, detail) VALUES (?, nullif(?, 0), ?, ?, ?)`,
		at.UnixMilli(), envID, identity, kind, detail)
	return err
}

// Record appends an event about an env that changes nothing else
// (reused, skipped, ...).
func (s *Store) Record(ctx context.Context, e *Env, kind, detail string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		return addEvent(ctx, tx, s.now(), e, kind, detail)
	})
}

// Events returns the log, oldest first: all of it when identity is "",
// else the events of that identity and of the env with id envID (when
// not 0), whatever identity they were recorded under.
func (s *Store) Events(ctx context.Context, identity string, envID int64) ([]Event, error) {
	return queryAll(ctx, s.db, scanEvent, `SELECT id, at, coalesce(env_id, 0), identity, kind, detail
		FROM events WHERE ? = '' OR identity = ? OR (? != 0 AND env_id = ?) ORDER BY id`, identity, identity, envID, envID)
}

func scanEvent(row scanner) (Event, error) {
	var ev Event
	var at int64
	err := row.Scan(&ev.ID, &at, &ev.EnvID, &ev.Identity, &ev.Kind, &ev.Detail)
	ev.At = time.UnixMilli(at)
	return ev, err
}

// LastActivity returns, for every env, when its latest event happened.
func (s *Store) LastActivity(ctx context.Context) (map[int64]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT env_id, max(at) FROM events WHERE env_id IS NOT NULL GROUP BY env_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	last := make(map[int64]time.Time)
	for rows.Next() {
		var id, at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		last[id] = time.UnixMilli(at)
	}
	return last, rows.Err()
}

// Feed reads the log as it grows, for those who follow it.
type Feed struct{ s *Store }

// Feed is the store's log, to follow.
func (s *Store) Feed() Feed { return Feed{s} }

// After returns the events recorded after the one with id after, oldest
// first.
func (f Feed) After(ctx context.Context, after int64) ([]Event, error) {
	return queryAll(ctx, f.s.db, scanEvent, `SELECT id, at, coalesce(env_id, 0), identity, kind, detail
		FROM events WHERE id > ? ORDER BY id`, after)
}

// Last is the id of the newest event, 0 when there is none.
func (f Feed) Last(ctx context.Context) (int64, error) {
	var id int64
	err := f.s.db.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&id)
	return id, err
}

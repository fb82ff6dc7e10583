// Package state is git-apex's SQLite store: environments and their event
// log, one database per repository at <git common dir>/apex/state.db,
// shared by every worktree. It is the only package that speaks SQL.
//
// The database runs in WAL mode with a busy timeout, and every write
// transaction begins IMMEDIATE: a deferred transaction that reads and
// then writes fails with "database is locked" under concurrent writers,
// whatever the timeout. The schema is versioned with PRAGMA user_version
// and migrated forward on open; a database newer than this binary is
// opened for reading only.
package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

// migrations are applied in order; migration i brings the schema to
// version i+1. Never edit one that has shipped: add another.
var migrations = []string{
	`CREATE TABLE envs (
		id           INTEGER PRIMARY KEY,
		identity     TEXT NOT NULL,
		workflow     TEXT NOT NULL,
		name         TEXT NOT NULL,
		mode_asked   TEXT NOT NULL,
		mode         TEXT NOT NULL,
		path         TEXT NOT NULL,
		branch       TEXT NOT NULL DEFAULT '',
		base         TEXT NOT NULL DEFAULT '',
		start_commit TEXT NOT NULL,
		container    TEXT NOT NULL DEFAULT '',
		status       TEXT NOT NULL CHECK (status IN ('active', 'preserved', 'destroyed')),
		parent_id    INTEGER REFERENCES envs(id),
		metadata     TEXT NOT NULL DEFAULT '{}',
		created_at   INTEGER NOT NULL,
		updated_at   INTEGER NOT NULL
	);
	CREATE UNIQUE INDEX envs_live_identity ON envs(identity) WHERE status != 'destroyed';
	CREATE UNIQUE INDEX envs_live_branch ON envs(branch) WHERE status != 'destroyed' AND branch != '';
	CREATE TABLE events (
		id       INTEGER PRIMARY KEY,
		at       INTEGER NOT NULL,
		env_id   INTEGER REFERENCES envs(id),
		identity TEXT NOT NULL,
		kind     TEXT NOT NULL,
		detail   TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX events_identity ON events(identity);`,

	// 2: links (aliases and sub-tasks), and closing an env's own identity
	// while links still use the env.
	`ALTER TABLE envs ADD COLUMN identity_closed INTEGER NOT NULL DEFAULT 0;
	DROP INDEX envs_live_identity;
	CREATE UNIQUE INDEX envs_live_identity ON envs(identity) WHERE status != 'destroyed' AND identity_closed = 0;
	CREATE TABLE links (
		alias      TEXT PRIMARY KEY,
		env_id     INTEGER NOT NULL REFERENCES envs(id),
		kind       TEXT NOT NULL CHECK (kind IN ('link', 'parent')),
		target     TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX links_env ON links(env_id);`,

	// 3: the paths each branch touched, by (start, tip): a cache for the
	// merged checks the hooks run at every merge.
	`CREATE TABLE touched (
		start TEXT NOT NULL,
		tip   TEXT NOT NULL,
		paths TEXT NOT NULL,
		PRIMARY KEY (start, tip)
	);`,

	// 4: the warm pool: detached worktrees, each idle or leased to a
	// process (its PID and start time, to tell a reused PID apart).
	`CREATE TABLE slots (
		id           INTEGER PRIMARY KEY,
		path         TEXT NOT NULL UNIQUE,
		pool_commit  TEXT NOT NULL,
		holder_pid   INTEGER NOT NULL DEFAULT 0,
		holder_start INTEGER NOT NULL DEFAULT 0,
		leased_at    INTEGER NOT NULL DEFAULT 0,
		created_at   INTEGER NOT NULL
	);`,
}

// SchemaVersion is the schema this binary writes.
var SchemaVersion = len(migrations)

// Store is an open state database.
type Store struct {
	db   *sql.DB
	path string
	// tooNew is set when the database's schema is newer than SchemaVersion;
	// every write returns it.
	tooNew error
}

// ErrIdentityTaken and ErrBranchTaken report a second live env for one
// identity or one branch.
var (
	ErrIdentityTaken = errors.New("identity already has a live environment")
	ErrBranchTaken   = errors.New("branch already belongs to a live environment")
)

// Open opens (creating if needed) the database at path and migrates it.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create state directory: %w", err)
	}
	dsn := "file:" + escapePath(path) +
		"?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate&_foreign_keys=1&_synchronous=NORMAL"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("cannot open state database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path}
	// A brand-new database written by many processes at once can still
	// report "locked" while the first one sets WAL mode: retry briefly.
	for wait := 5 * time.Millisecond; ; wait *= 2 {
		err = s.migrate(ctx)
		if err == nil || !isBusy(err) || wait > time.Second {
			break
		}
		time.Sleep(wait)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("cannot open state database %s: %w", path, err)
	}
	return s, nil
}

// escapePath makes a file name safe inside an SQLite URI.
func escapePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func isBusy(err error) bool {
	var serr sqlite3.Error
	return errors.As(err, &serr) && (serr.Code == sqlite3.ErrBusy || serr.Code == sqlite3.ErrLocked)
}

// migrate brings the schema up to SchemaVersion under a write lock.
func (s *Store) migrate(ctx context.Context) error {
	version, err := s.userVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if version >= SchemaVersion {
		s.noteTooNew(version)
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		version, err := s.userVersion(ctx, tx) // another process may have migrated
		if err != nil {
			return err
		}
		for v := version; v < SchemaVersion; v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
		}
		_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", max(version, SchemaVersion)))
		return err
	})
}

func (s *Store) noteTooNew(version int) {
	if version > SchemaVersion {
		s.tooNew = fmt.Errorf("the state database %s has schema version %d, newer than this git-apex knows (%d): upgrade git-apex to change it", s.path, version, SchemaVersion)
	}
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) userVersion(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// write runs fn in an IMMEDIATE transaction and commits it.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.tooNew != nil {
		return s.tooNew
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Version returns the database's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	return s.userVersion(ctx, s.db)
}

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
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
	"golang.org/x/sys/unix"

	"github.com/git-apex/git-apex/exitcode"
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

	// 5: a merged check's verdict on a span: the hooks' cheap filter
	// never passes over a branch another check already found merged.
	`ALTER TABLE touched ADD COLUMN merged TEXT NOT NULL DEFAULT '';`,

	// 6: a slot's warm container: made ahead on an engine (its Docker
	// context; '' the repository's own) for a batch task to take, with
	// the fingerprint of the policy it was made for.
	`ALTER TABLE slots ADD COLUMN warm_engine TEXT NOT NULL DEFAULT '';
	ALTER TABLE slots ADD COLUMN warm_container TEXT NOT NULL DEFAULT '';
	ALTER TABLE slots ADD COLUMN warm_spec TEXT NOT NULL DEFAULT '';`,

	// 7: the engine a full env's container is on (container.Endpoint's
	// record: its address, context and TLS material); '' for an env made
	// before, until its container is found.
	`ALTER TABLE envs ADD COLUMN engine TEXT NOT NULL DEFAULT '';`,

	// 8: the process group of the task working in a leased slot (its
	// leader's PID and start time), ended before the slot is reset.
	`ALTER TABLE slots ADD COLUMN task_pgid INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE slots ADD COLUMN task_start INTEGER NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the schema this binary writes.
var SchemaVersion = len(migrations)

// Store is an open state database.
type Store struct {
	db   *sql.DB
	path string
	wait time.Duration
	now  func() time.Time // the clock every record is stamped with
	// tooNew is set when the database's schema is newer than SchemaVersion;
	// every write returns it.
	tooNew error
	// readOnly is set when the database's directory cannot be written (a
	// read-only repository): it is read as it is, and writes fail.
	readOnly bool
}

// Options configure an opened store.
type Options struct {
	// Wait is how long a write waits for another process's; 0: DefaultWait.
	Wait time.Duration
	// Clock stamps every record and event, and is what Now reads; nil:
	// time.Now. Tests set it to make times they can compare.
	Clock func() time.Time
	// ReadOnly opens an existing database only to read it, as it is:
	// nothing is created or migrated, and every write fails. A database
	// there is none of is fs.ErrNotExist; one with another schema than
	// this binary's is *SchemaError.
	ReadOnly bool
}

// Now is the time on the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// DefaultWait is how long a write waits for another process's write to
// end before it gives up and says who holds the database.
const DefaultWait = 5 * time.Second

// ErrIdentityTaken and ErrBranchTaken report a second live env for one
// identity or one branch.
var (
	ErrIdentityTaken = errors.New("identity already has a live environment")
	ErrBranchTaken   = errors.New("branch already belongs to a live environment")
)

// Open opens the database at path, creating it when there is none, and
// migrates it. A write waits up to opts.Wait for another process's
// write to end. A file that is not a whole SQLite database
// (empty, truncated, or something else) is never taken for a new one: it
// is a *DamagedError. In a directory this process cannot write, the
// database is opened read-only.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	wait, now := opts.Wait, opts.Clock
	if wait <= 0 {
		wait = DefaultWait
	}
	if now == nil {
		now = time.Now
	}
	if err := checkFile(path); err != nil {
		return nil, err
	}
	if opts.ReadOnly && !exists(path) {
		return nil, fs.ErrNotExist
	}
	readOnly := opts.ReadOnly || unix.Access(filepath.Dir(path), unix.W_OK) != nil && exists(path)
	if !readOnly && !exists(path) {
		if err := create(ctx, path); err != nil {
			return nil, fmt.Errorf("cannot create state database %s: %w", path, err)
		}
	}
	dsn := "file:" + escapePath(path) + fmt.Sprintf("?_busy_timeout=%d&_txlock=immediate&_foreign_keys=1&_synchronous=NORMAL", wait.Milliseconds())
	switch {
	case opts.ReadOnly:
		dsn += "&mode=ro" // other processes may write it meanwhile
	case readOnly:
		dsn += "&mode=ro&immutable=1"
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("cannot open state database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, wait: wait, now: now, readOnly: readOnly}
	if readOnly {
		version, err := userVersion(ctx, db)
		if err != nil {
			db.Close()
			return nil, s.explain(err)
		}
		s.noteTooNew(version)
		if opts.ReadOnly && version != SchemaVersion {
			db.Close()
			return nil, &SchemaError{Path: path, Version: version}
		}
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, s.explain(err)
	}
	return s, nil
}

// SchemaError is a database opened read-only whose schema is not the
// one this binary writes: reading it would need a migration first.
type SchemaError struct {
	Path    string
	Version int
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the state database %s has schema version %d; this git-apex reads %d", e.Path, e.Version, SchemaVersion)
}

// create makes a new database at path, whole or not at all: it is made
// and migrated under a temporary name, then linked into place, so that no
// process ever sees a database half made (an empty file is damage). A
// process that loses the race uses the winner's.
func create(ctx context.Context, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	db, err := sql.Open("sqlite3", "file:"+escapePath(tmp)+"?_txlock=immediate")
	if err != nil {
		return err
	}
	s := &Store{db: db, path: tmp}
	err = s.migrate(ctx)
	if err == nil {
		_, err = db.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// escapePath makes a file name safe inside an SQLite URI.
func escapePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// migrate brings the schema up to SchemaVersion under a write lock.
func (s *Store) migrate(ctx context.Context) error {
	version, err := userVersion(ctx, s.db)
	if err != nil {
		return err
	}
	if version >= SchemaVersion {
		s.noteTooNew(version)
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		version, err := userVersion(ctx, tx) // another process may have migrated
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
		s.tooNew = exitcode.New(exitcode.Refused, "the state database %s has schema version %d, newer than this git-apex knows (%d): upgrade git-apex to change it", s.path, version, SchemaVersion)
	}
}

// queryer is a database or a transaction, to read from.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scanner is a row to read the columns of.
type scanner interface{ Scan(dest ...any) error }

// queryAll runs query and reads every row with scan, in order.
func queryAll[T any](ctx context.Context, q queryer, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		all = append(all, v)
	}
	return all, rows.Err()
}

// userVersion is the schema version the database records.
func userVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// write runs fn in an IMMEDIATE transaction and commits it.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := s.CheckWritable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return s.explain(err)
	}
	return s.explain(tx.Commit())
}

// Probe checks that a write can be made now: that no other process holds
// the database longer than the Store's wait.
func (s *Store) Probe(ctx context.Context) error {
	return s.write(ctx, func(*sql.Tx) error { return nil })
}

// CheckWritable fails when a write cannot be made: the schema is newer
// than this git-apex, or the database is read-only here. Commands call it
// before they change anything on disk.
func (s *Store) CheckWritable() error {
	if s.tooNew != nil {
		return s.tooNew
	}
	if s.readOnly {
		return exitcode.New(exitcode.Refused, "the state database %s is read-only here (its directory cannot be written): git-apex can only read it", s.path)
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Version returns the database's schema version.
func (s *Store) Version(ctx context.Context) (int, error) {
	return userVersion(ctx, s.db)
}

// Check runs SQLite's quick_check over the whole database: damage
// inside it (a page overwritten in the middle of the file), which the
// header check at Open cannot see, is a *DamagedError.
func (s *Store) Check(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return s.explain(err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.explain(err)
		}
		for _, l := range strings.Split(line, "\n") {
			if l != "ok" && !strings.HasPrefix(l, "*** in database") {
				found = append(found, l)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return s.explain(err)
	}
	if len(found) > 0 {
		return &DamagedError{Path: s.path, Why: "SQLite's quick_check finds: " + strings.Join(found, "; ")}
	}
	return nil
}

// Stamp is t as every JSON output of git-apex writes a time: in UTC, to
// the millisecond (the state's own precision).
func Stamp(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

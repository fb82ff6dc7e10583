package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is an environment's lifecycle state.
type Status string

// The statuses. A destroyed env is history: its identity and branch are
// free again.
const (
	Active    Status = "active"
	Preserved Status = "preserved"
	Destroyed Status = "destroyed"
)

// Env is one environment.
type Env struct {
	ID          int64
	Identity    string
	Workflow    string
	Name        string
	ModeAsked   string // the mode the policy or flag asked for
	Mode        string // the mode it got, after any fallback
	Path        string
	Branch      string // "" when detached
	Base        string // branch its work is measured against
	StartCommit string
	Container   string
	// Engine is the record of the engine its container is on
	// (container.Endpoint.Record); "" when it has none, or was made before
	// engines were recorded and its container was not found since.
	Engine string
	Status Status
	// IdentityClosed is set when the env's own identity was closed while
	// links still used the env: the identity is free for a new env.
	IdentityClosed bool
	ParentID       int64 // 0 when it has no parent
	Metadata       map[string]string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Live reports whether the env still exists.
func (e *Env) Live() bool { return e.Status != Destroyed }

// Vars are the variables a command run for the env sees of it; APEX_PORT
// is the first of its block of ports, when it has one.
func (e *Env) Vars() []string {
	vars := []string{"APEX_ID=" + e.Identity, "APEX_PATH=" + e.Path, "APEX_BRANCH=" + e.Branch,
		"APEX_BASE=" + e.Base, "APEX_WORKFLOW=" + e.Workflow, "APEX_MODE=" + e.Mode}
	if port := e.Metadata[PortKey]; port != "" {
		vars = append(vars, "APEX_PORT="+port)
	}
	return vars
}

// PortKey is the metadata key of an env's port block: its first port.
const PortKey = "port"

// NoAnswerKey is the metadata key set when a full env's container did
// not answer a git hook's read in time: the hooks do not read it again
// until a command (exec, sync, remove) has read it.
const NoAnswerKey = "hook_no_answer"

// GitTimeoutKey is the metadata key set when git did not finish in a
// full env's worktree within a git hook's bound (gitx.TimeoutError): the
// hooks do not run git there again; a command outside them (gc, remove)
// still does, and removes the env.
const GitTimeoutKey = "hook_git_timeout"

// Contained reports whether a container writes in the env's worktree:
// a full env's. git-apex then trusts nothing in it (see gitx.StatusOptions).
func (e *Env) Contained() bool { return e.Mode == "full" }

const envColumns = `id, identity, workflow, name, mode_asked, mode, path, branch, base,
	start_commit, container, engine, status, identity_closed, coalesce(parent_id, 0), metadata, created_at, updated_at`

func scanEnv(row scanner) (*Env, error) {
	var e Env
	var meta string
	var created, updated int64
	err := row.Scan(&e.ID, &e.Identity, &e.Workflow, &e.Name, &e.ModeAsked, &e.Mode, &e.Path,
		&e.Branch, &e.Base, &e.StartCommit, &e.Container, &e.Engine, &e.Status, &e.IdentityClosed, &e.ParentID, &meta, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(meta), &e.Metadata); err != nil {
		return nil, fmt.Errorf("env %s: cannot read metadata: %w", e.Identity, err)
	}
	e.CreatedAt, e.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	return &e, nil
}

// Live returns the live env whose own identity is identity (and not
// closed), or nil when it has none; see Resolve for links too.
func (s *Store) Live(ctx context.Context, identity string) (*Env, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+envColumns+` FROM envs
		WHERE identity = ? AND status != 'destroyed' AND identity_closed = 0`, identity)
	e, err := scanEnv(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return e, err
}

// Latest returns the newest env whose own identity is identity, live or
// not, or nil.
func (s *Store) Latest(ctx context.Context, identity string) (*Env, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+envColumns+` FROM envs WHERE identity = ? ORDER BY id DESC LIMIT 1`, identity)
	e, err := scanEnv(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return e, err
}

// BranchHolder returns the live env that owns branch, or nil.
func (s *Store) BranchHolder(ctx context.Context, branch string) (*Env, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+envColumns+` FROM envs
		WHERE branch = ? AND branch != '' AND status != 'destroyed'`, branch)
	e, err := scanEnv(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return e, err
}

// Envs lists envs, oldest first; destroyed ones only when all is set.
func (s *Store) Envs(ctx context.Context, all bool) ([]*Env, error) {
	query := `SELECT ` + envColumns + ` FROM envs`
	if !all {
		query += ` WHERE status != 'destroyed'`
	}
	return queryAll(ctx, s.db, scanEnv, query+` ORDER BY created_at, id`)
}

// Create records a new env and its first event in one transaction. It
// fails with ErrIdentityTaken or ErrBranchTaken when another live env
// has the identity or the branch.
func (s *Store) Create(ctx context.Context, e *Env, kind, detail string) error {
	now := s.now()
	meta, err := json.Marshal(nonNil(e.Metadata))
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO envs (identity, workflow, name, mode_asked, mode, path,
			branch, base, start_commit, container, engine, status, parent_id, metadata, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, 0), ?, ?, ?)`,
			e.Identity, e.Workflow, e.Name, e.ModeAsked, e.Mode, e.Path, e.Branch, e.Base, e.StartCommit,
			e.Container, e.Engine, e.Status, e.ParentID, string(meta), now.UnixMilli(), now.UnixMilli())
		if err != nil {
			return uniqueError(err)
		}
		if e.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		e.CreatedAt, e.UpdatedAt = time.UnixMilli(now.UnixMilli()), time.UnixMilli(now.UnixMilli())
		return addEvent(ctx, tx, now, e, kind, detail)
	})
}

// Save writes an env's changed fields (mode, path, branch, base,
// container, engine, status, identity_closed, metadata) and an event in one transaction. To
// destroy an env, use Destroy.
func (s *Store) Save(ctx context.Context, e *Env, kind, detail string) error {
	now := s.now()
	meta, err := json.Marshal(nonNil(e.Metadata))
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		return save(ctx, tx, now, e, string(meta), kind, detail)
	})
}

func save(ctx context.Context, tx *sql.Tx, now time.Time, e *Env, meta, kind, detail string) error {
	_, err := tx.ExecContext(ctx, `UPDATE envs SET mode = ?, path = ?, branch = ?, base = ?, container = ?,
		engine = ?, status = ?, identity_closed = ?, metadata = ?, updated_at = ? WHERE id = ?`,
		e.Mode, e.Path, e.Branch, e.Base, e.Container, e.Engine, e.Status, e.IdentityClosed, meta, now.UnixMilli(), e.ID)
	if err != nil {
		return uniqueError(err)
	}
	e.UpdatedAt = time.UnixMilli(now.UnixMilli())
	return addEvent(ctx, tx, now, e, kind, detail)
}

// Destroy marks an env destroyed with an event, and drops the links that
// resolved to it, each with an "unlinked" event, in one transaction. It
// returns the aliases dropped.
func (s *Store) Destroy(ctx context.Context, e *Env, kind, detail string) ([]string, error) {
	now := s.now()
	meta, err := json.Marshal(nonNil(e.Metadata))
	if err != nil {
		return nil, err
	}
	var dropped []string
	err = s.write(ctx, func(tx *sql.Tx) error {
		e.Status = Destroyed
		if err := save(ctx, tx, now, e, string(meta), kind, detail); err != nil {
			return err
		}
		links, err := linksOf(ctx, tx, e.ID)
		if err != nil {
			return err
		}
		for _, l := range links {
			if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE alias = ?`, l.Alias); err != nil {
				return err
			}
			if err := addEventFor(ctx, tx, now, e.ID, l.Alias, "unlinked", "environment "+e.Identity+" destroyed"); err != nil {
				return err
			}
			dropped = append(dropped, l.Alias)
		}
		return nil
	})
	return dropped, err
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// uniqueError turns a violation of a live-env index into its sentinel.
func uniqueError(err error) error {
	if classify(err) == uniqueFault {
		if strings.Contains(err.Error(), "envs.branch") {
			return ErrBranchTaken
		}
		return ErrIdentityTaken
	}
	return err
}

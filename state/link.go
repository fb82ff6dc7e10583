package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Link kinds.
const (
	KindLink   = "link"   // an alias made with `git apex link`
	KindParent = "parent" // a sub-task started with --parent
)

// Link is an extra identity that resolves to an existing env.
type Link struct {
	Alias     string
	EnvID     int64
	Kind      string
	Target    string // the identity it was linked to, as given
	CreatedAt time.Time
}

// ErrAliasTaken reports an alias that already names a live env or a link.
var ErrAliasTaken = errors.New("alias already in use")

// Resolve finds the live env an identity names: its own env, or the env a
// link resolves to (then link is that link), or else the newest live env
// whose own identity it was and that nothing names any more (its identity
// closed, its last link dropped by unlink, or kept by an older git-apex's
// close), so that no live env is ever out of reach. It returns a nil env
// when the identity names nothing live.
func (s *Store) Resolve(ctx context.Context, identity string) (env *Env, link *Link, err error) {
	if env, err = s.Live(ctx, identity); env != nil || err != nil {
		return env, nil, err
	}
	l, err := findLink(ctx, s.db, identity)
	if l == nil && err == nil {
		return s.unnamed(ctx, identity)
	}
	if err != nil {
		return nil, nil, err
	}
	row := s.db.QueryRowContext(ctx, `SELECT `+envColumns+` FROM envs WHERE id = ? AND status != 'destroyed'`, l.EnvID)
	env, err = scanEnv(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	return env, l, err
}

// unnamed returns the newest live env whose own identity, closed, is
// identity and that no link names, or a nil env.
func (s *Store) unnamed(ctx context.Context, identity string) (*Env, *Link, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+envColumns+` FROM envs
		WHERE identity = ? AND status != 'destroyed' AND identity_closed = 1
		AND NOT EXISTS (SELECT 1 FROM links WHERE links.env_id = envs.id) ORDER BY id DESC LIMIT 1`, identity)
	env, err := scanEnv(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	return env, nil, err
}

// findLink reads the link named alias, or nil.
func findLink(ctx context.Context, q queryer, alias string) (*Link, error) {
	l, err := scanLink(q.QueryRowContext(ctx, `SELECT `+linkColumns+` FROM links WHERE alias = ?`, alias))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &l, err
}

// AddLink makes alias resolve to env, with a "linked" event. It fails with
// ErrAliasTaken when alias is a live env's own identity or a link already.
func (s *Store) AddLink(ctx context.Context, alias string, env *Env, kind, target string) error {
	now := s.now()
	return s.write(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM envs WHERE identity = ? AND status != 'destroyed' AND identity_closed = 0`, alias).Scan(&n)
		if err != nil {
			return err
		}
		if existing, err := findLink(ctx, tx, alias); err != nil {
			return err
		} else if n > 0 || existing != nil {
			return ErrAliasTaken
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO links (alias, env_id, kind, target, created_at) VALUES (?, ?, ?, ?, ?)`,
			alias, env.ID, kind, target, now.UnixMilli()); err != nil {
			return err
		}
		return addEventFor(ctx, tx, now, env.ID, alias, "linked", fmt.Sprintf("%s of %s (%s)", kind, env.Identity, target))
	})
}

// RemoveLink drops a link with an "unlinked" event; why says what ended it.
func (s *Store) RemoveLink(ctx context.Context, l *Link, why string) error {
	now := s.now()
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM links WHERE alias = ?`, l.Alias); err != nil {
			return err
		}
		return addEventFor(ctx, tx, now, l.EnvID, l.Alias, "unlinked", why)
	})
}

// Links returns the links of every live env, by env id, oldest first.
func (s *Store) Links(ctx context.Context) (map[int64][]Link, error) {
	all, err := queryAll(ctx, s.db, scanLink, `SELECT `+linkColumns+` FROM links ORDER BY created_at, alias`)
	byEnv := make(map[int64][]Link)
	for _, l := range all {
		byEnv[l.EnvID] = append(byEnv[l.EnvID], l)
	}
	return byEnv, err
}

func linksOf(ctx context.Context, q queryer, envID int64) ([]Link, error) {
	return queryAll(ctx, q, scanLink, `SELECT `+linkColumns+` FROM links WHERE env_id = ? ORDER BY created_at, alias`, envID)
}

// LinksOf returns an env's links, oldest first.
func (s *Store) LinksOf(ctx context.Context, envID int64) ([]Link, error) {
	return linksOf(ctx, s.db, envID)
}

const linkColumns = `alias, env_id, kind, target, created_at`

func scanLink(row scanner) (Link, error) {
	var l Link
	var created int64
	err := row.Scan(&l.Alias, &l.EnvID, &l.Kind, &l.Target, &created)
	l.CreatedAt = time.UnixMilli(created)
	return l, err
}

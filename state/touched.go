package state

import (
	"context"
	"database/sql"
	"strings"
)

// Span is a branch's own history: from the commit its env started at to
// its tip.
type Span struct {
	Start, Tip string
}

// Touched returns the cached paths touched in each span it knows.
func (s *Store) Touched(ctx context.Context, spans []Span) (map[Span][]string, error) {
	known := make(map[Span][]string)
	if len(spans) == 0 {
		return known, nil
	}
	want := make(map[Span]bool, len(spans))
	args := make([]any, 0, len(spans))
	for _, sp := range spans {
		want[sp] = true
		args = append(args, sp.Tip)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT start, tip, paths FROM touched WHERE tip IN (?`+strings.Repeat(", ?", len(args)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var sp Span
		var paths string
		if err := rows.Scan(&sp.Start, &sp.Tip, &paths); err != nil {
			return nil, err
		}
		if want[sp] {
			known[sp] = splitPaths(paths)
		}
	}
	return known, rows.Err()
}

// SaveTouched caches the paths of new spans and forgets every span not
// in current, so the cache holds only what live envs can ask for.
func (s *Store) SaveTouched(ctx context.Context, found map[Span][]string, current []Span) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for sp, paths := range found {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO touched (start, tip, paths) VALUES (?, ?, ?)`,
				sp.Start, sp.Tip, strings.Join(paths, "\n")); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS current_spans (start TEXT, tip TEXT)`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM current_spans`); err != nil {
			return err
		}
		for _, sp := range current {
			if _, err := tx.ExecContext(ctx, `INSERT INTO current_spans VALUES (?, ?)`, sp.Start, sp.Tip); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM touched WHERE NOT EXISTS
			(SELECT 1 FROM current_spans c WHERE c.start = touched.start AND c.tip = touched.tip)`)
		return err
	})
}

func splitPaths(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

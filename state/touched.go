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

// Touch is what the cache knows of a span: the paths it touched, and
// why a merged check found it merged ("" when none did).
type Touch struct {
	Paths  []string
	Merged string
}

// Touched returns what the cache knows of each span it knows.
func (s *Store) Touched(ctx context.Context, spans []Span) (map[Span]Touch, error) {
	known := make(map[Span]Touch)
	if len(spans) == 0 {
		return known, nil
	}
	want := make(map[Span]bool, len(spans))
	args := make([]any, 0, len(spans))
	for _, sp := range spans {
		want[sp] = true
		args = append(args, sp.Tip)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT start, tip, paths, merged FROM touched WHERE tip IN (?`+strings.Repeat(", ?", len(args)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var sp Span
		var paths, merged string
		if err := rows.Scan(&sp.Start, &sp.Tip, &paths, &merged); err != nil {
			return nil, err
		}
		if want[sp] {
			known[sp] = Touch{Paths: splitPaths(paths), Merged: merged}
		}
	}
	return known, rows.Err()
}

// SaveTouched caches what is known of spans, and, unless current is
// nil, forgets every span not in current, so the cache holds only what
// live envs can ask for.
func (s *Store) SaveTouched(ctx context.Context, found map[Span]Touch, current []Span) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for sp, t := range found {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO touched (start, tip, paths, merged) VALUES (?, ?, ?, ?)`,
				sp.Start, sp.Tip, strings.Join(t.Paths, "\n"), t.Merged); err != nil {
				return err
			}
		}
		if current == nil {
			return nil
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

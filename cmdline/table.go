package cmdline

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Table is rows of cells under a header, printed in aligned columns two
// spaces apart.
type Table struct {
	Header []string
	Rows   [][]string
	// Paint colours a cell of a row (not the header) for the terminal;
	// nil: no colour. It must not change the cell's printed width.
	Paint func(row, col int, cell string) string
	// Width is the width to fit in (the terminal's); 0: no limit. To fit,
	// the columns in Drop are left out, in that order, while the table is
	// too wide; then the column Shrink is shortened, from its left, to no
	// less than 20 characters.
	Width  int
	Drop   []int
	Shrink int
}

// Write prints the table.
func (t *Table) Write(w io.Writer) error {
	widths := make([]int, len(t.Header))
	measure := func(row []string) {
		for i, cell := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	measure(t.Header)
	for _, row := range t.Rows {
		measure(row)
	}
	shown := make([]bool, len(widths))
	total := -2
	for i, n := range widths {
		shown[i], total = true, total+n+2
	}
	for _, col := range t.Drop {
		if t.Width == 0 || total <= t.Width {
			break
		}
		shown[col], total = false, total-widths[col]-2
	}
	if over := total - t.Width; t.Width > 0 && over > 0 && t.Shrink >= 0 {
		widths[t.Shrink] = max(widths[t.Shrink]-over, utf8.RuneCountInString(t.Header[t.Shrink]), 20)
	}
	last := len(widths) - 1
	for last > 0 && !shown[last] {
		last--
	}
	var b strings.Builder
	line := func(r int, row []string) {
		for i, cell := range row {
			if !shown[i] {
				continue
			}
			if i == t.Shrink && t.Width > 0 {
				cell = shortenLeft(cell, widths[i])
			}
			pad := widths[i] - utf8.RuneCountInString(cell)
			if r >= 0 && t.Paint != nil {
				cell = t.Paint(r, i, cell)
			}
			b.WriteString(cell)
			if i < last {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		b.WriteString("\n")
	}
	line(-1, t.Header)
	for r, row := range t.Rows {
		line(r, row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shortenLeft keeps the end of s within n characters, marking the cut
// with "…": the end of a path is what tells envs apart.
func shortenLeft(s string, n int) string {
	runes := []rune(s)
	if len(runes) <= n {
		return s
	}
	return "…" + string(runes[len(runes)-n+1:])
}

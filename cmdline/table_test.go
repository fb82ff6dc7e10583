package cmdline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTableFitsWidth(t *testing.T) {
	table := &Table{
		Header: []string{"ID", "EXTRA", "PATH"},
		Rows: [][]string{
			{"feature-one", "x", "/home/someone/src/project.worktrees/feature-one"},
			{"issue-7", "y", "/home/someone/src/project.worktrees/issue-7"},
		},
		Paint: func(_, col int, cell string) string { return Paint(Green, cell) },
		Width: 40, Drop: []int{1}, Shrink: 2,
	}
	var b strings.Builder
	if err := table.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		plain := strings.NewReplacer("\x1b[32m", "", "\x1b[0m", "").Replace(line)
		if n := utf8.RuneCountInString(plain); n > 40 {
			t.Errorf("line is %d wide, over 40: %q", n, plain)
		}
		if strings.Contains(plain, "EXTRA") || strings.Contains(plain, " x ") {
			t.Errorf("the dropped column is shown: %q", plain)
		}
	}
	if !strings.Contains(b.String(), "feature-one") || !strings.Contains(b.String(), "…/feature-one") && !strings.Contains(b.String(), "…") {
		t.Errorf("identities must stay whole and paths be shortened from the left:\n%s", b.String())
	}
	// Colour does not move the columns: the paths start at one offset.
	lines := strings.Split(b.String(), "\n")
	plain := func(s string) string { return strings.NewReplacer("\x1b[32m", "", "\x1b[0m", "").Replace(s) }
	if strings.Index(plain(lines[1]), "…") != strings.Index(plain(lines[2]), "…") {
		t.Errorf("columns not aligned:\n%s", plain(b.String()))
	}
}

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeCommands checks that the README's command table lists every
// command `git apex --help` shows, and no other.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "\n## Commands\n")
	table, _, _ = strings.Cut(table, "\n\n`start` flags")
	row := regexp.MustCompile("(?m)^\\| `git apex ([a-z][a-z-]*)")
	var inReadme []string
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		if !slices.Contains(inReadme, m[1]) {
			inReadme = append(inReadme, m[1])
		}
	}
	var inHelp []string
	for _, c := range newApp().Commands {
		if !c.Hidden {
			inHelp = append(inHelp, c.Name)
		}
	}
	slices.Sort(inReadme)
	slices.Sort(inHelp)
	for _, name := range inHelp {
		if !slices.Contains(inReadme, name) {
			t.Errorf("git apex %s is in --help but not in the README's command table", name)
		}
	}
	for _, name := range inReadme {
		if !slices.Contains(inHelp, name) {
			t.Errorf("git apex %s is in the README's command table but not in --help", name)
		}
	}
}

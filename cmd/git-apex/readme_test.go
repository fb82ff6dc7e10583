package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/git-apex/git-apex/exitcode"
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

// TestReadmeExitCodes checks that the README's exit code table and the
// help's description name exactly the codes the exitcode package has.
func TestReadmeExitCodes(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "\n## Exit codes\n")
	table, _, _ = strings.Cut(table, "\n## ")
	var inReadme []int
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9]+) \|`).FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		inReadme = append(inReadme, n)
	}
	codes := []int{exitcode.OK, exitcode.Failure, exitcode.Usage, exitcode.Refused, exitcode.Policy,
		exitcode.Git, exitcode.Runtime, exitcode.NotFound, exitcode.Timeout, exitcode.CannotExecute, exitcode.CommandNotFound,
		exitcode.Hangup, exitcode.Interrupted, exitcode.Quit, exitcode.BrokenPipe}
	if !slices.Equal(inReadme, codes) {
		t.Errorf("the README's exit codes are %v; the exitcode package has %v", inReadme, codes)
	}
	help := newApp().Description
	for _, code := range codes {
		if !strings.Contains(help, fmt.Sprintf(" %d ", code)) && !strings.Contains(help, fmt.Sprintf("%d success", code)) {
			t.Errorf("the help's description does not name exit code %d", code)
		}
	}
}

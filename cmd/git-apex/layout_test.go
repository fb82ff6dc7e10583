package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is this module's path.
const module = "github.com/git-apex/git-apex"

// notCommands are the files of cmd/git-apex that hold no command's work
// (shell-init and cd are shell glue, whole in their file; engine.go and
// engine_light.go say which build serve and mcp run in).
var notCommands = []string{"app.go", "engine.go", "engine_light.go", "main.go", "man.go", "output.go", "shellinit.go"}

// TestCommandFiles checks that the work of each command is in a file of
// the same name in another package, one hop from cmd/git-apex/<command>.go.
func TestCommandFiles(t *testing.T) {
	commands, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range commands {
		if strings.HasSuffix(file, "_test.go") || slices.Contains(notCommands, file) {
			continue
		}
		found, _ := filepath.Glob(filepath.Join("..", "..", "*", file))
		if len(found) == 0 {
			t.Errorf("no package has a file %s for the work of cmd/git-apex/%s", file, file)
		}
	}
}

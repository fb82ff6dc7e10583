package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layout's rules, as the README's code map states them.
const (
	maxPackageLines = 1600 // "about 1,500" lines of code, tests apart
	maxMethods      = 32   // "about 30" methods on one type
	module          = "github.com/git-apex/git-apex"
)

// onlyImporters names, for an import, the packages that alone may import
// it (tests apart).
var onlyImporters = map[string][]string{
	"github.com/moby/moby/client": {"container"},
	"database/sql":                {"state"},
	"os/exec":                     {"gitx", "hostexec", "bench", "gitx/gittest"},
}

// hooksMayImport is all of the module that hooks may import: it imports
// no domain package.
var hooksMayImport = []string{"exitcode", "gitx"}

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

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// TestLayout checks the rules of the package layout: who may import the
// Docker client, SQL and os/exec; that hooks imports no domain package;
// and that no package or type outgrows its room.
func TestLayout(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, imp := range p.Imports {
			if allowed, ok := onlyImporters[imp]; ok && !slices.Contains(allowed, name) {
				t.Errorf("%s imports %s, which only %s may", name, imp, strings.Join(allowed, ", "))
			}
			if own, ok := strings.CutPrefix(imp, module+"/"); ok && name == "hooks" && !slices.Contains(hooksMayImport, own) {
				t.Errorf("hooks imports %s: it may import only %s", own, strings.Join(hooksMayImport, ", "))
			}
		}
		lines := 0
		methods := map[string]int{}
		fset := token.NewFileSet()
		for _, file := range p.GoFiles {
			path := filepath.Join(p.Dir, file)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines += bytes.Count(src, []byte("\n"))
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil {
					methods[receiverName(fn.Recv.List[0].Type)]++
				}
			}
		}
		if lines > maxPackageLines {
			t.Errorf("package %s has %d lines, more than %d: split it by concern", name, lines, maxPackageLines)
		}
		for typ, n := range methods {
			if n > maxMethods {
				t.Errorf("%s.%s has %d methods, more than %d: give a concern its own type", name, typ, n, maxMethods)
			}
		}
	}
}

// receiverName is the name of a method's receiver type.
func receiverName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

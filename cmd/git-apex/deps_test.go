package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is the house's layer order: which of the module's packages may
// import which. "a, b < c, d;" says that c and d may import a and b, and
// whatever a and b may import. Every package of the module is named
// here: a new one takes its place in the order before it can build. Tests
// apart (a test may import what it needs to drive its package).
const layers = `
	# Leaves: they import nothing of this module.
	NONE < exitcode, words, hostpath, nofollow, flock, cleanstat, trust,
	       docs/schema, gitx/gittest, bench/empty;

	# The machine: git, processes, the database, the policy.
	exitcode, nofollow < trap;
	exitcode, flock, hostpath, nofollow, trap < gitx;
	gitx < trash, hooks;
	exitcode < state;
	exitcode, hostpath < policy;
	hostpath < hostexec;
	hostexec < container, intent;
	container, gitx < copymode;
	state < ports;
	gitx, state < merged;

	# An opened repository, and what works on one.
	container, hooks, policy, state, trust < repo;
	repo, trap < heal;
	repo, nofollow < planted;
	planted < disarm;
	copymode, disarm, heal, ports < sandbox;
	repo, hostexec, nofollow < setup;
	sandbox, trash, words < pool;
	sandbox, setup < envexec;

	# Operations.
	envexec, pool, intent, merged, cleanstat < isolation;
	isolation < sweep;
	sweep < doctor;
	doctor < service;
	pool < batch;

	# Front ends.
	service, docs/schema < api, mcptools;
	service < cmdline;
	cmdline < shell;
	batch, shell, api, mcptools < cmd/git-apex;
	gitx < bench;
`

// onlyImporters names, for an import from outside the module (a prefix
// of its path), the packages that alone may import it (tests apart).
var onlyImporters = map[string][]string{
	"github.com/moby/moby/":             {"container"},
	"github.com/containerd/errdefs":     {"container"},
	"github.com/distribution/reference": {"container"},
	"database/sql":                      {"state"},
	"github.com/mattn/go-sqlite3":       {"state"},
	"os/exec":                           {"gitx", "hostexec", "bench", "gitx/gittest"},
	"github.com/modelcontextprotocol/":  {"mcptools"},
	"github.com/urfave/cli/":            {"cmd/git-apex", "cmdline", "shell"},
	"net/http":                          {"api", "container", "bench"},
}

// parseLayers reads layers into, for each package, what it may import.
// It refuses a rule that names a lower package no earlier rule placed, or
// places a package twice: so the order is written bottom up and can hold
// no cycle.
func parseLayers(rules string) (map[string]map[string]bool, error) {
	allowed := map[string]map[string]bool{}
	var text strings.Builder
	for line := range strings.SplitSeq(rules, "\n") {
		line, _, _ = strings.Cut(line, "#")
		text.WriteString(line + " ")
	}
	for rule := range strings.SplitSeq(text.String(), ";") {
		rule = strings.Join(strings.Fields(rule), " ")
		if rule == "" {
			continue
		}
		lower, higher, ok := strings.Cut(rule, "<")
		if !ok {
			return nil, fmt.Errorf("layer rule %q has no <", rule)
		}
		below := map[string]bool{}
		for _, pkg := range names(lower) {
			if pkg == "NONE" {
				continue
			}
			under, placed := allowed[pkg]
			if !placed {
				return nil, fmt.Errorf("layer rule %q: %s is not placed by an earlier rule", rule, pkg)
			}
			below[pkg] = true
			for p := range under {
				below[p] = true
			}
		}
		for _, pkg := range names(higher) {
			if _, placed := allowed[pkg]; placed {
				return nil, fmt.Errorf("layer rule %q: %s is placed by an earlier rule", rule, pkg)
			}
			allowed[pkg] = below
		}
	}
	return allowed, nil
}

// names splits a comma-separated list of package names.
func names(list string) []string {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// moduleImports lists the module's packages with their imports (tests
// apart), in the build with tags, module paths made relative.
func moduleImports(t *testing.T, tags string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", tags, "-json=ImportPath,Imports", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	found := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		found[strings.TrimPrefix(p.ImportPath, module+"/")] = p.Imports
	}
	return found
}

// TestDependencies checks every import of the module's packages, in both
// builds (git-apex and the engine's), against the layer order and the
// rules on who may import the Docker client, SQL, os/exec, MCP, the
// command-line library and an HTTP stack.
func TestDependencies(t *testing.T) {
	allowed, err := parseLayers(layers)
	if err != nil {
		t.Fatal(err)
	}
	reported := map[string]bool{} // "pkg imports what": said once for both builds
	complain := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !reported[msg] {
			reported[msg] = true
			t.Error(msg)
		}
	}
	for _, tags := range []string{"", "engine"} {
		for pkg, imports := range moduleImports(t, tags) {
			may, placed := allowed[pkg]
			if !placed {
				complain("package %s has no place in the layer order: add it to layers in deps_test.go", pkg)
				continue
			}
			for _, imp := range imports {
				if own, ok := strings.CutPrefix(imp, module+"/"); ok {
					if !may[own] {
						complain("%s imports %s, against the layer order in deps_test.go", pkg, own)
					}
					continue
				}
				for prefix, only := range onlyImporters {
					if strings.HasPrefix(imp, prefix) && !slices.Contains(only, pkg) {
						complain("%s imports %s, which only %s may", pkg, imp, strings.Join(only, ", "))
					}
				}
			}
		}
	}
}

// TestLayerRules checks the reading of the layer order: what a package
// may import is transitive, and an order that is not written bottom up
// (where a cycle could hide) is refused.
func TestLayerRules(t *testing.T) {
	allowed, err := parseLayers("NONE < a; a < b; b < c, d;")
	if err != nil {
		t.Fatal(err)
	}
	if !allowed["c"]["a"] || !allowed["d"]["b"] || allowed["a"]["c"] || allowed["b"]["c"] || allowed["c"]["d"] {
		t.Errorf("layers a < b < c, d: allowed = %v", allowed)
	}
	for _, bad := range []string{"NONE < a; b < c;", "NONE < a; a < b; b < a;", "a b"} {
		if _, err := parseLayers(bad); err == nil {
			t.Errorf("layers %q: no error", bad)
		}
	}
}

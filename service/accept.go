package service

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-apex/git-apex/hostpath"
	"github.com/git-apex/git-apex/policy"
)

// The values the three front ends accept, the one list of each: the
// command line's flags, the API's fields and parameters, and MCP's
// tools' enums (docs/schema, whose enums a test holds to these).
var (
	// Statuses are what a list may be narrowed to.
	Statuses = []string{"active", "preserved", "destroyed", Live, All}
	// Modes are the isolation modes, for a start and for a list.
	Modes = []string{string(policy.Full), string(policy.Worktree), string(policy.Shared)}
)

// oneOf refuses (a FieldError of field, exit 2) a value that is not ""
// and not one of values.
func oneOf(field, what, value string, values []string) error {
	if value == "" || slices.Contains(values, value) {
		return nil
	}
	return &FieldError{Field: field, Err: fmt.Errorf("unknown %s %q: use %s", what, value, strings.Join(values, ", "))}
}

// CheckStatus refuses a status that is not "" (live) or one of Statuses.
func CheckStatus(status string) error { return oneOf("status", "status", status, Statuses) }

// CheckMode refuses a mode that is not "" or one of Modes; field is the
// request's name for it ("isolation", "mode").
func CheckMode(field, mode string) error { return oneOf(field, "isolation mode", mode, Modes) }

// CheckCommand refuses a command with no program: field is the request's
// name for it ("command", "commands").
func CheckCommand(field string, argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return &FieldError{Field: field, Err: errors.New("no command given: give the program and its arguments, like [\"make\", \"test\"]")}
	}
	return nil
}

// ServedRepository is the served repository a request names: an
// absolute path whose real path is one of roots (the real paths of those
// served). hint says how to serve another, for the error.
func ServedRepository(named string, roots []string, hint string) (string, error) {
	if !filepath.IsAbs(named) {
		return "", &FieldError{Field: "repository", Err: fmt.Errorf("repository %q is not an absolute path", named)}
	}
	real := hostpath.RealPath(named)
	for _, root := range roots {
		if real == root {
			return root, nil
		}
	}
	return "", &FieldError{Field: "repository", Err: fmt.Errorf("repository %s is not served here; this server serves %s (%s)",
		named, strings.Join(roots, ", "), hint)}
}

// Package service is the one set of operations that the command line,
// the HTTP API (serve) and MCP (mcp) offer on an opened repository:
// start, list and get, remove, close and finish, link and unlink, exec,
// changes, the event log, and the repository's upkeep: gc, the warm
// pool's status, warm and drain, doctor, and the trash and restore. Each takes a typed request and returns a
// typed result in the JSON vocabulary the three share, or an error that
// carries its exit code (exitcode; a FieldError also names the field that
// was wrong). The three only print, serve or answer these results, so
// they cannot disagree.
package service

import (
	"errors"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/isolation"
	"github.com/git-apex/git-apex/repo"
)

// Service runs the operations on one opened repository.
type Service struct {
	r *repo.Repo
	m *isolation.Manager
}

// New is the service of an opened repository.
func New(r *repo.Repo) *Service {
	return &Service{r: r, m: isolation.New(r)}
}

// Repo is the repository the service works on.
func (s *Service) Repo() *repo.Repo { return s.r }

// FieldError is a request refused for one of its fields: a usage error
// (exit 2) that a caller can point at the field.
type FieldError struct {
	Field string // the request's name for it: "identity", "isolation", ...
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }

// ExitCode is exitcode.Usage.
func (e *FieldError) ExitCode() int { return exitcode.Usage }

// fieldError wraps err, when it is not nil, as a FieldError of field.
func fieldError(field string, err error) error {
	if err == nil {
		return nil
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return err
	}
	return &FieldError{Field: field, Err: err}
}

// identityError is err, as a FieldError of "identity" when it is a usage
// error: an operation on an identity refuses nothing else for its syntax.
func identityError(err error) error {
	if exitcode.Of(err) != exitcode.Usage {
		return err
	}
	return fieldError("identity", err)
}

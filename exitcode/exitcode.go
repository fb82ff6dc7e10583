// Package exitcode holds git-apex's stable exit codes and the error type
// that carries one. The codes are part of the command-line contract and are
// listed in the README; main maps an error to its code once, with Of.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

// The exit codes. Never renumber one: scripts depend on them.
const (
	OK              = 0   // success
	Failure         = 1   // unexpected failure
	Usage           = 2   // bad flags, invalid identity, unknown workflow, not in a usable repository
	Refused         = 3   // refused to protect work: dirty, unmerged, in use, branch held, limit reached
	Policy          = 4   // invalid policy
	Git             = 5   // git failed
	Runtime         = 6   // container runtime unavailable where full mode was required, or a full env's own engine does not answer
	NotFound        = 7   // no such environment or identity
	Timeout         = 124 // a command stopped at its timeout (as timeout(1) says)
	CannotExecute   = 126 // exec's command is there but cannot be run (as a shell says)
	CommandNotFound = 127 // exec's command is not there (as a shell says "command not found")
	Hangup          = 129 // interrupted by SIGHUP: its terminal closed (128+1, as a shell says)
	Interrupted     = 130 // interrupted by a signal: SIGINT (Ctrl-C) or SIGTERM
	Quit            = 131 // interrupted by SIGQUIT: Ctrl-\ (128+3)
	BrokenPipe      = 141 // interrupted because its output's reader went away (128+13, SIGPIPE's)
)

// Coder is implemented by errors that know their exit code.
type Coder interface {
	ExitCode() int
}

// Error is an error with an exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns the code the process should exit with.
func (e *Error) ExitCode() int { return e.Code }

// New returns an error with the given code and a formatted message.
func New(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Of returns the exit code for err: 0 for nil, the code of the outermost
// Coder in its chain, 130 for a cancelled context, else 1.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return Interrupted
	}
	return Failure
}

// Status is a command's own exit status passed through (git apex exec):
// main exits with it and prints nothing.
type Status int

func (s Status) Error() string { return "" }

// ExitCode returns the status.
func (s Status) ExitCode() int { return int(s) }

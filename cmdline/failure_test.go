package cmdline

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestFailure: a signal's cancellation reads "interrupted", however many
// parallel parts failed of it; any other error, or one while the command
// still runs, reads as it is.
func TestFailure(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	canceled := context.Canceled
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{done, canceled, "interrupted"},
		{done, fmt.Errorf("cannot list worktrees: %w", canceled), "cannot list worktrees: interrupted"},
		{done, errors.Join(canceled, canceled), "interrupted"},
		{done, errors.Join(fmt.Errorf("a: %w", canceled), errors.New("b")), "a: interrupted\nb"},
		{done, errors.New("not found"), "not found"},
		{context.Background(), canceled, "context canceled"},
	} {
		if got := Failure(c.ctx, c.err); got != c.want {
			t.Errorf("Failure(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

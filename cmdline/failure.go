package cmdline

import (
	"context"
	"errors"
	"strings"
)

// Failure is how a command's error reads at the end of the command line:
// its message, with "interrupted" for the cancellation a signal caused
// (ctx, the command's, is done), which is no cause to show.
func Failure(ctx context.Context, err error) string {
	msg := err.Error()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		msg = strings.TrimSuffix(msg, context.Canceled.Error()) + "interrupted"
	}
	return msg
}

package cmdline

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// Failure is how a command's error reads at the end of the command line:
// its message, with "interrupted" for the cancellation a signal caused
// (ctx, the command's, is done), which is no cause to show. Work done in
// parallel can fail several times over from the one cancellation (joined
// errors, one a line): a line is said once.
func Failure(ctx context.Context, err error) string {
	msg := err.Error()
	if ctx.Err() == nil || !errors.Is(err, context.Canceled) {
		return msg
	}
	var lines []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.ReplaceAll(line, context.Canceled.Error(), "interrupted")
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

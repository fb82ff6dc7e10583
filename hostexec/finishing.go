package hostexec

import (
	"context"
	"time"
)

// Finishing is the context for clean-up begun under ctx that must not
// stop half-way when ctx is cancelled (an interrupt: SignalContext): it
// is not cancelled with ctx, but grace after ctx is, so that clean-up
// that hangs still ends. done releases it.
func Finishing(ctx context.Context, grace time.Duration) (fctx context.Context, done func()) {
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-fctx.Done():
		case <-timer.C:
			cancel()
		}
	})
	return fctx, func() { stop(); cancel() }
}

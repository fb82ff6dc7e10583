package repo

import (
	"bytes"
	"context"
	"testing"

	"github.com/git-apex/git-apex/gitx/gittest"
)

// TestPersonalInterrupted: reading the personal settings when the command
// was interrupted (its context ended, so git is not run) is no cause for a
// warning.
func TestPersonalInterrupted(t *testing.T) {
	var stderr bytes.Buffer
	r, err := Open(context.Background(), gittest.NewRepo(t), Options{Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Personal(ctx)
	if stderr.Len() > 0 {
		t.Errorf("an interrupted read of the personal settings warned:\n%s", stderr.String())
	}
}

package hostexec

import (
	"context"
	"testing"
	"time"
)

// TestFinishing: the context outlives its parent's cancel until the grace
// passes, then ends; done ends it at once.
func TestFinishing(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	long, doneLong := Finishing(parent, time.Hour)
	short, doneShort := Finishing(parent, time.Millisecond)
	defer doneShort()
	cancel()
	<-short.Done() // ends once its grace has passed
	if err := long.Err(); err != nil {
		t.Fatalf("cancelled with its parent: %v", err)
	}
	doneLong()
	if long.Err() == nil {
		t.Fatal("not ended by done")
	}
}

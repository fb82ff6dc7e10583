package repo

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConnectNamesTheTimeout checks that an engine that takes connections
// and never answers is given up on after the wait, and that the error
// names the setting to raise.
func TestConnectNamesTheTimeout(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "hung.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	_, _, _, err = connect(context.Background(), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "[container].connect_timeout (200ms)") {
		t.Fatalf("connect to a hung engine: %v", err)
	}
}

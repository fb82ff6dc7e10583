//go:build linux

package hostexec

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestEndAllHopper starts, in a session of its own, a process that forks
// anew each generation and exits at once, forever, each generation
// carrying a mark: EndAll ends it, and no process with the mark is left.
func TestEndAllHopper(t *testing.T) {
	dir := t.TempDir()
	hop := filepath.Join(dir, "hop.sh")
	if err := os.WriteFile(hop, []byte("touch \"$0.started\"\nsh \"$0\" &\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := "APEX_TEST_HOPPER=" + dir
	cmd := exec.Command("setsid", "sh", hop)
	cmd.Env = append(os.Environ(), mark)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	find := func() []Process { return Find([]Trace{{Mark: mark}})[0] }
	t.Cleanup(func() { EndAll(find, time.Second) })
	for i := 0; i < 500 && !exists(hop+".started"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	ended, err := EndAll(find, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(ended) == 0 {
		t.Fatal("EndAll ended nothing; want the hopper")
	}
	if left := find(); len(left) > 0 {
		t.Fatalf("%s still running after EndAll", Describe(left))
	}
	// A generation missed would have forked hundreds more by now.
	time.Sleep(200 * time.Millisecond)
	if left := find(); len(left) > 0 {
		t.Fatalf("%s running after EndAll: a generation escaped", Describe(left))
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

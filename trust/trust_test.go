package trust

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestApproveRevoke(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := s.Approved("/r/.git", "h1"); ok || err != nil {
		t.Fatalf("approved before anything: %v, %v", ok, err)
	}
	if err := s.Approve("/r/.git", "h1", false); err != nil {
		t.Fatal(err)
	}
	for repo, hash := range map[string]string{"/r/.git": "h2", "/copy/.git": "h1"} {
		if ok, _, _ := s.Approved(repo, hash); ok {
			t.Errorf("%s with %s approved", repo, hash)
		}
	}
	if ok, onHost, _ := s.Approved("/r/.git", "h1"); !ok || onHost {
		t.Errorf("Approved = %v, on host %v; want approved, not on the host", ok, onHost)
	}
	if had, err := s.Revoke("/r/.git"); !had || err != nil {
		t.Errorf("Revoke = %v, %v", had, err)
	}
	if ok, _, _ := s.Approved("/r/.git", "h1"); ok {
		t.Error("approved after revoke")
	}
}

func TestOnHostIsPartOfTheApproval(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, _ := Open()
	if err := s.Approve("/r/.git", "h1", true); err != nil {
		t.Fatal(err)
	}
	if ok, onHost, _ := s.Approved("/r/.git", "h1"); !ok || !onHost {
		t.Errorf("after Approve on the host: %v, %v", ok, onHost)
	}
	if _, onHost, _ := s.Approved("/r/.git", "h2"); onHost {
		t.Error("on the host for other settings")
	}
	// Approving again without it withdraws it.
	if err := s.Approve("/r/.git", "h1", false); err != nil {
		t.Fatal(err)
	}
	if ok, onHost, _ := s.Approved("/r/.git", "h1"); !ok || onHost {
		t.Errorf("after Approve in containers only: %v, %v", ok, onHost)
	}
}

func TestConcurrentApprovalsAreAllKept(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	s, _ := Open()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Approve(strings.Repeat("r", i+1), "h", false); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range 20 {
		if ok, _, _ := s.Approved(strings.Repeat("r", i+1), "h"); !ok {
			t.Errorf("approval %d lost", i)
		}
	}
}

func TestCorruptFileSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	os.MkdirAll(filepath.Join(dir, "git-apex"), 0o700)
	os.WriteFile(filepath.Join(dir, "git-apex", "trust.json"), []byte("{nope"), 0o600)
	s, _ := Open()
	if _, _, err := s.Approved("/r", "h"); err == nil || !strings.Contains(err.Error(), "fix or delete the file") {
		t.Errorf("corrupt file: %v", err)
	}
}

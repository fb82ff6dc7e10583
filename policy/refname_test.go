package policy

import (
	"os/exec"
	"testing"
)

// TestCheckBranchNameAgreesWithGit uses git itself as the oracle.
func TestCheckBranchNameAgreesWithGit(t *testing.T) {
	names := []string{
		"main", "feature/x", "a.b", "x-1_2", "UPPER", "ünïcode",
		"", "HEAD", "-x", "/x", "x/", "x.", "a//b", "a..b", "a@{b", "a b",
		"a~b", "a^b", "a:b", "a?b", "a*b", "a[b", "a\\b", "a\tb", "a\x7fb",
		".x", "x/.y", "x.lock", "x/y.lock/z", "a/b/c", "@x", "x@", "a.lock.b",
	}
	for _, name := range names {
		gitOK := exec.Command("git", "check-ref-format", "--branch", name).Run() == nil
		ourErr := CheckBranchName(name)
		if gitOK != (ourErr == nil) {
			t.Errorf("%q: git accepts=%v, CheckBranchName err=%v", name, gitOK, ourErr)
		}
	}
	// check-ref-format --branch expands "@" to the current branch, so git
	// cannot judge it there; `git branch @` refuses it.
	if CheckBranchName("@") == nil {
		t.Error(`"@" accepted`)
	}
}

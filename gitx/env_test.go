package gitx

import (
	"testing"
)

// TestCleanEnvAppendsApart: what each caller appends to the shared
// environment is its own, as batch tasks running at once need (each its
// APEX_ID), and git's own environment keeps its LC_ALL.
func TestCleanEnvAppendsApart(t *testing.T) {
	// Enough variables that the environment is built by several growths
	// of its slice, leaving room at its end unless it is clipped.
	for _, name := range []string{"APEX_TEST_A", "APEX_TEST_B", "APEX_TEST_C", "APEX_TEST_D", "APEX_TEST_E"} {
		t.Setenv(name, "x")
	}
	gitVars := gitEnv()
	a := append(CleanEnv(), "APEX_ID=task-a")
	b := append(CleanEnv(), "APEX_ID=task-b")
	if got := a[len(a)-1]; got != "APEX_ID=task-a" {
		t.Errorf("task a's environment ends with %s", got)
	}
	if got := b[len(b)-1]; got != "APEX_ID=task-b" {
		t.Errorf("task b's environment ends with %s", got)
	}
	if got := gitVars[len(gitVars)-2]; got != "LC_ALL=C" {
		t.Errorf("git's environment has %s where LC_ALL=C was", got)
	}
}

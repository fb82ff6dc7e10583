package ports

import (
	"net"
	"strconv"
	"testing"

	"github.com/git-apex/git-apex/state"
)

func TestPickIsStableUniqueAndFree(t *testing.T) {
	first := Pick("feature-a", nil)
	if first == "" || first != Pick("feature-a", nil) {
		t.Fatalf("Pick(feature-a) = %q, then another: not stable", first)
	}
	// A live env holding the block pushes the identity to another one.
	holder := &state.Env{Identity: "feature-other", Metadata: map[string]string{state.PortKey: first}}
	second := Pick("feature-a", []*state.Env{holder})
	if second == "" || second == first {
		t.Fatalf("Pick with %s taken = %q", first, second)
	}
	// A port some process listens on is not given out either.
	n, _ := strconv.Atoi(first)
	l, err := net.Listen("tcp", ":"+strconv.Itoa(n+3))
	if err != nil {
		t.Skipf("cannot listen on %d: %v", n+3, err)
	}
	defer l.Close()
	if got := Pick("feature-a", nil); got == first {
		t.Errorf("Pick gave block %s although port %d in it is in use", got, n+3)
	}
	if p, _ := strconv.Atoi(second); p < firstPort || p+Block-1 > lastPort || (p-firstPort)%Block != 0 {
		t.Errorf("block %d is out of range or unaligned", p)
	}
}

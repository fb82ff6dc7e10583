package pool

import "testing"

// turnCame reports whether t's turn has come.
func turnCame(t *ticket) bool {
	select {
	case <-t.turn:
		return true
	default:
		return false
	}
}

// TestLineFirstComeFirstServed: the first to join has its turn at once;
// the others get theirs in the order they joined, as those before them
// leave, whether the one leaving is first or not; leaving twice, or
// rejoining, puts no one ahead of those already waiting.
func TestLineFirstComeFirstServed(t *testing.T) {
	var l Line
	a, b, c := l.join(), l.join(), l.join()
	if !turnCame(a) || turnCame(b) || turnCame(c) {
		t.Fatal("only the first to join has its turn")
	}
	c.leave() // gives up waiting: nobody's turn changes
	if turnCame(b) {
		t.Fatal("one leaving from behind gave the turn away")
	}
	a.leave()
	a.leave()
	if !turnCame(b) {
		t.Fatal("the second did not get its turn when the first left")
	}
	d := l.join() // the first, back for more: behind those waiting
	if turnCame(d) {
		t.Fatal("one joining again went ahead of the waiting")
	}
	b.leave()
	if !turnCame(d) {
		t.Fatal("the last did not get its turn once alone")
	}
	var none *Line
	if !turnCame(none.join()) {
		t.Fatal("with no line, the turn comes at once")
	}
}

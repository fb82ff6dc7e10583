package pool

import (
	"slices"
	"sync"
)

// A Line makes the tasks of one process (a batch) that acquire slots of
// one pool get them in the order they asked: first come, first served.
// Without it, a batch whose parallelism is above [pool].max had its
// waiting tasks overtaken: a worker that released a slot leased it again
// at once for its next task, while the tasks that had waited since the
// start looked again only every 200 ms at most, and ran last. In a line,
// only the first tries to lease a slot (an idle one, a reclaimed one, a
// new one); it leaves the line once it has one, before the slot is made
// ready (checked and switched to its commit), so that slots are still
// made ready in parallel; the next then tries. A lease that turns out
// not to be usable (the slot is removed) joins the line again, at its
// end. Processes that wait for the same pool are not ordered among
// themselves: each looks again as before.
type Line struct {
	mu      sync.Mutex
	waiting []chan struct{} // in order of arrival; the first one's is closed: its turn
}

// ticket is one acquire's place in a Line.
type ticket struct {
	line *Line
	turn chan struct{} // closed once it is first
}

// join puts a new acquire at the end of the line; on a nil line, its
// turn has come at once.
func (l *Line) join() *ticket {
	t := &ticket{line: l, turn: make(chan struct{})}
	if l == nil {
		close(t.turn)
		return t
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting = append(l.waiting, t.turn)
	if len(l.waiting) == 1 {
		close(t.turn)
	}
	return t
}

// leave takes the acquire out of its line, first or not; when it was
// first, the next one's turn comes. Leaving twice does nothing.
func (t *ticket) leave() {
	l := t.line
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.waiting, t.turn)
	if i < 0 {
		return
	}
	l.waiting = slices.Delete(l.waiting, i, i+1)
	if i == 0 && len(l.waiting) > 0 {
		close(l.waiting[0])
	}
}

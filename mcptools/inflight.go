package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// inFlight keeps the requests read from the client that have no reply
// written yet, so that the end of the client's input waits for them: a
// client may send its last calls and close its side at once. A request
// the client cancels is answered by none (as MCP says), so it leaves too.
type inFlight struct {
	ctx     context.Context
	mu      sync.Mutex
	pending map[string]bool // by id, as JSON
	idle    *sync.Cond
}

func newInFlight(ctx context.Context) *inFlight {
	f := &inFlight{ctx: ctx, pending: map[string]bool{}}
	f.idle = sync.NewCond(&f.mu)
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.idle.Broadcast()
		f.mu.Unlock()
	})
	return f
}

// message is what inFlight reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"` // of notifications/cancelled
	} `json:"params"`
}

// note adds the requests (a method and an id) the client sent in one
// line (a message or a batch), and drops those it cancelled; or, for a
// line the server wrote, drops those it replied to (an id, no method).
func (f *inFlight) note(line []byte, fromClient bool) {
	var msgs []message
	line = bytes.TrimSpace(line)
	if bytes.HasPrefix(line, []byte("[")) {
		json.Unmarshal(line, &msgs)
	} else {
		var m message
		if json.Unmarshal(line, &m) == nil {
			msgs = []message{m}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range msgs {
		id := string(m.ID)
		switch {
		case fromClient && m.Method == "notifications/cancelled":
			delete(f.pending, string(m.Params.RequestID))
		case id == "" || id == "null":
		case fromClient && m.Method != "":
			f.pending[id] = true
		case !fromClient && m.Method == "":
			delete(f.pending, id)
		}
	}
	if len(f.pending) == 0 {
		f.idle.Broadcast()
	}
}

// wait returns once every request read has its reply, or ctx ends.
func (f *inFlight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) > 0 && f.ctx.Err() == nil {
		f.idle.Wait()
	}
}

// reader is in, noting the requests it holds; its end comes once their
// replies are written.
func (f *inFlight) reader(in io.Reader) io.ReadCloser {
	return &flightReader{f: f, in: bufio.NewReader(in)}
}

type flightReader struct {
	f    *inFlight
	in   *bufio.Reader
	left []byte // of the last line, what Read has not returned yet
}

func (r *flightReader) Read(p []byte) (int, error) {
	if len(r.left) == 0 {
		line, err := r.in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				r.f.wait()
			}
			return 0, err
		}
		r.f.note(line, true)
		r.left = line
	}
	n := copy(p, r.left)
	r.left = r.left[n:]
	return n, nil
}

func (r *flightReader) Close() error { return nil }

// writer is out, noting the replies written to it.
func (f *inFlight) writer(out io.Writer) io.WriteCloser {
	return &flightWriter{f: f, out: out}
}

type flightWriter struct {
	f    *inFlight
	out  io.Writer
	part []byte // a line begun and not ended
}

func (w *flightWriter) Write(p []byte) (int, error) {
	n, err := w.out.Write(p)
	w.part = append(w.part, p[:n]...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		w.f.note(w.part[:i], false)
		w.part = w.part[i+1:]
	}
	return n, err
}

func (w *flightWriter) Close() error { return nil }

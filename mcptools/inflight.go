package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
)

// inFlight counts the requests read from the client that have no reply
// written yet, so that the end of the client's input waits for them: a
// client may send its last calls and close its side at once.
type inFlight struct {
	ctx     context.Context
	mu      sync.Mutex
	pending int
	idle    *sync.Cond
}

func newInFlight(ctx context.Context) *inFlight {
	f := &inFlight{ctx: ctx}
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
}

// count adds the requests (a method and an id) and takes away the
// replies (an id and no method) of one line, a message or a batch.
func (f *inFlight) count(line []byte, requests bool) {
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
		switch {
		case len(m.ID) == 0 || string(m.ID) == "null":
		case requests && m.Method != "":
			f.pending++
		case !requests && m.Method == "":
			f.pending--
		}
	}
	if f.pending <= 0 {
		f.pending = 0
		f.idle.Broadcast()
	}
}

// wait returns once every request read has its reply, or ctx ends.
func (f *inFlight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.pending > 0 && f.ctx.Err() == nil {
		f.idle.Wait()
	}
}

// reader is in, counting the requests it holds; its end comes once their
// replies are written.
func (f *inFlight) reader(in io.Reader) io.ReadCloser {
	return &countingReader{f: f, in: bufio.NewReader(in)}
}

type countingReader struct {
	f    *inFlight
	in   *bufio.Reader
	left []byte // of the last line, what Read has not returned yet
}

func (r *countingReader) Read(p []byte) (int, error) {
	if len(r.left) == 0 {
		line, err := r.in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				r.f.wait()
			}
			return 0, err
		}
		r.f.count(line, true)
		r.left = line
	}
	n := copy(p, r.left)
	r.left = r.left[n:]
	return n, nil
}

func (r *countingReader) Close() error { return nil }

// writer is out, counting the replies written to it.
func (f *inFlight) writer(out io.Writer) io.WriteCloser {
	return &countingWriter{f: f, out: out}
}

type countingWriter struct {
	f    *inFlight
	out  io.Writer
	part []byte // a line begun and not ended
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.out.Write(p)
	w.part = append(w.part, p[:n]...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		w.f.count(w.part[:i], false)
		w.part = w.part[i+1:]
	}
	return n, err
}

func (w *countingWriter) Close() error { return nil }

package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/git-apex/git-apex/service"
)

// heartbeat is how often an idle event stream gets a comment, so that
// proxies and clients see it alive.
const heartbeat = 15 * time.Second

// events streams the lifecycle events of a repository (?repository=,
// else the first served) as Server-Sent Events: each has the event's id,
// its kind as the event name, and as data the JSON that `log --json`
// prints. It starts after the newest event, or after Last-Event-ID when
// a client resumes; ?after=ID does the same for clients that cannot set
// the header.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	// A stream ends with its client, or when the server shuts down.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.streams, cancel)()
	r = r.WithContext(ctx)
	root, err := s.pick(r.Context(), r.URL.Query().Get("repository"), false)
	if err != nil {
		writeError(w, err, "")
		return
	}
	after := int64(-1)
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if v == "" {
			continue
		}
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			writeError(w, &service.FieldError{Field: "after", Err: fmt.Errorf("event id %q is not a number of 0 or more", v)}, "")
			return
		}
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, fmt.Errorf("this connection cannot stream"), "")
		return
	}
	err = s.withService(r.Context(), root, func(svc *service.Service) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		var mu sync.Mutex // one writer at a time: events and heartbeats
		ended := false    // the handler returned: w is not to be written
		write := func(format string, args ...any) error {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				return nil
			}
			_, err := fmt.Fprintf(w, format, args...)
			flusher.Flush()
			return err
		}
		write(": git-apex events\n\n")
		done := make(chan struct{})
		defer func() {
			mu.Lock()
			ended = true
			mu.Unlock()
			close(done)
		}()
		go func() {
			beat := time.NewTicker(heartbeat)
			defer beat.Stop()
			for {
				select {
				case <-done:
					return
				case <-beat.C:
					write(": alive\n\n")
				}
			}
		}()
		return svc.Follow(r.Context(), after, func(ev service.Event) error {
			data, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			return write("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Event, data)
		})
	})
	if err != nil && r.Context().Err() == nil {
		s.notef("event stream ended: %v", err)
	}
}

package service

import (
	"context"
	"time"

	"github.com/git-apex/git-apex/exitcode"
	"github.com/git-apex/git-apex/state"
)

// Event is one line of the event log.
type Event struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Identity  string    `json:"identity"`
	Event     string    `json:"event"` // created, removed, fallback, ...
	Detail    string    `json:"detail"`
}

func eventOf(ev state.Event) Event {
	return Event{ID: ev.ID, CreatedAt: state.Stamp(ev.At), Identity: ev.Identity, Event: ev.Kind, Detail: ev.Detail}
}

// Log returns the event log, oldest first: all of it, or an identity's
// and its env's. An identity with no env and no events is not found
// (exit 7). The log is the state's: no env's lifecycle is involved.
func (s *Service) Log(ctx context.Context, identity string) ([]Event, error) {
	events, err := s.events(ctx, identity)
	if err != nil {
		return nil, identityError(err)
	}
	out := make([]Event, 0, len(events))
	for _, ev := range events {
		out = append(out, eventOf(ev))
	}
	return out, nil
}

// events reads the log: all of it, or an identity's and its env's (the
// live one, else its latest destroyed one).
func (s *Service) events(ctx context.Context, identity string) ([]state.Event, error) {
	var envID int64
	if identity != "" {
		env, err := s.r.Find(ctx, identity)
		switch {
		case err == nil:
			envID = env.ID
		case exitcode.Of(err) != exitcode.NotFound:
			return nil, err // an identity with no env may still have events
		}
	}
	events, err := s.r.Store.Events(ctx, identity, envID)
	if err == nil && identity != "" && len(events) == 0 {
		return nil, exitcode.New(exitcode.NotFound, "nothing is known of %s", identity)
	}
	return events, err
}

// FollowInterval is how often Follow looks for new events. Events come
// from every process that changes the repository (the command line, a
// hook, a server), so the state database is the one place to watch.
const FollowInterval = 200 * time.Millisecond

// Follow calls fn with every event recorded after the one with id after
// (after < 0: after the newest now), in order, until ctx ends or fn
// returns an error. It returns nil when ctx ends.
func (s *Service) Follow(ctx context.Context, after int64, fn func(Event) error) error {
	var err error
	if after < 0 {
		if after, err = s.r.Store.Feed().Last(ctx); err != nil {
			return err
		}
	}
	tick := time.NewTicker(FollowInterval)
	defer tick.Stop()
	for {
		events, err := s.r.Store.Feed().After(ctx, after)
		if err != nil && ctx.Err() == nil {
			return err
		}
		for _, ev := range events {
			if err := fn(eventOf(ev)); err != nil {
				return err
			}
			after = ev.ID
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

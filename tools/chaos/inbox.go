package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// inboxPage is the answer of GET /sessions/{id}/inbox.
type inboxPage struct {
	Messages []struct {
		Seq  uint64 `json:"seq"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	} `json:"messages"`
	Next uint64 `json:"next"`
}

// sightings are the first time the run's readers saw each event id in an
// inbox, for the recovery times.
type sightings struct {
	mu    sync.Mutex
	first map[string]time.Time
}

func newSightings() *sightings { return &sightings{first: map[string]time.Time{}} }

func (s *sightings) see(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.first[id]; !ok {
		s.first[id] = at
	}
}

func (s *sightings) at(id string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.first[id]
	return t, ok
}

// follow long-polls session's inbox from the nodes in turn (the next one
// after any error) until ctx ends, noting every event id it sees.
func (w *workload) follow(ctx context.Context, session string, first int) {
	var after uint64
	for i := first; ctx.Err() == nil; {
		urls := w.t.URLs()
		q := url.Values{"after": {strconv.FormatUint(after, 10)}, "limit": {"500"}, "wait": {"5s"}}
		var page inboxPage
		err := w.c.api(ctx, []string{urls[i%len(urls)]}, 0, http.MethodGet, "/sessions/"+url.PathEscape(session)+"/inbox?"+q.Encode(), nil, &page)
		if err != nil {
			i++
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		now := time.Now()
		for _, m := range page.Messages {
			w.seen.see(m.Data.ID, now)
			after = max(after, m.Seq)
		}
		after = max(after, page.Next)
	}
}

// readAll reads session's whole inbox, page by page, from the first node
// that answers every page.
func (w *workload) readAll(ctx context.Context, session string) ([]Message, error) {
	urls := w.t.URLs()
	var last error
	for i := range urls {
		var out []Message
		var after uint64
		for {
			q := url.Values{"after": {strconv.FormatUint(after, 10)}, "limit": {"500"}}
			var page inboxPage
			if err := w.c.api(ctx, []string{urls[i]}, 0, http.MethodGet, "/sessions/"+url.PathEscape(session)+"/inbox?"+q.Encode(), nil, &page); err != nil {
				last = err
				out = nil
				break
			}
			for _, m := range page.Messages {
				out = append(out, Message{Session: session, Seq: m.Seq, EventID: m.Data.ID})
				after = max(after, m.Seq)
			}
			if len(page.Messages) == 0 {
				return out, nil
			}
		}
	}
	return nil, fmt.Errorf("read the inbox of %s: %w", session, last)
}

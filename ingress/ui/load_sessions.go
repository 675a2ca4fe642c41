package ui

import (
	"errors"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
)

// inboxShown is how many of an inbox's newest messages the session page
// shows; inboxPages bounds how many pages of 200 it reads to find them.
const (
	inboxShown = 100
	inboxPage  = 200
	inboxPages = 10
)

// loadSessions reads the session registry.
func (h *Handler) loadSessions(r *http.Request) (string, any, error) {
	if h.cfg.Sessions == nil {
		return "Sessions", nil, errUnavailable
	}
	list, err := h.cfg.Sessions.List(r.Context())
	return "Sessions", list, err
}

// sessionData is the session page's data: the session and its inbox's
// newest messages (oldest first).
type sessionData struct {
	Session  sentinel.Session
	Messages []sentinel.Message
	// Total is how many messages were read; Truncated when more exist
	// than the page read.
	Total     int
	Truncated bool
}

// loadSession reads one session and its inbox, without moving its read
// cursor.
func (h *Handler) loadSession(r *http.Request) (string, any, error) {
	if h.cfg.Sessions == nil || h.cfg.Inboxes == nil {
		return "Session", nil, errUnavailable
	}
	id := chi.URLParam(r, "id")
	if !sentinel.ValidSessionID(id) {
		return "Session", nil, sentinel.Errorf(sentinel.CodeInvalidSessionID, "not a session id")
	}
	s, err := h.cfg.Sessions.Get(r.Context(), id)
	var de *sentinel.Error
	if errors.As(err, &de) && de.Code == sentinel.CodeSessionNotFound {
		// Sentinels deliver to a session id whether or not it registered:
		// its inbox is still worth showing.
		s, err = sentinel.Session{ID: id, Status: "not registered"}, nil
	}
	if err != nil {
		return "Session", nil, err
	}
	d := sessionData{Session: s}
	var after uint64
	for i := 0; i < inboxPages; i++ {
		cur := after
		pg, err := h.cfg.Inboxes.Read(r.Context(), sentinel.InboxQuery{SessionID: id, After: &cur, Limit: inboxPage})
		if err != nil {
			return "Session " + id, d, err
		}
		d.Messages = append(d.Messages, pg.Messages...)
		if len(d.Messages) > inboxShown {
			d.Messages = slices.Clone(d.Messages[len(d.Messages)-inboxShown:])
		}
		d.Total += len(pg.Messages)
		if len(pg.Messages) < inboxPage || pg.Next <= after {
			break
		}
		after = pg.Next
		d.Truncated = i == inboxPages-1
	}
	return "Session " + id, d, nil
}

// loadFollows reads every session follow.
func (h *Handler) loadFollows(r *http.Request) (string, any, error) {
	if h.cfg.Follows == nil {
		return "Follows", nil, errUnavailable
	}
	list, err := h.cfg.Follows.List(r.Context(), "")
	return "Follows", list, err
}

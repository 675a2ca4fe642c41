package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Sessions implements api.Sessions over the REST API.
type Sessions struct {
	C *Client
}

var _ api.Sessions = Sessions{}

type sessionAnswer struct {
	Session sentinel.Session `json:"session"`
}

// Register creates (201) or updates (200) a session (POST /sessions).
func (s Sessions) Register(ctx context.Context, req sentinel.RegisterSession) (sentinel.Session, bool, error) {
	var out sessionAnswer
	status, err := s.C.DoStatus(ctx, http.MethodPost, "/sessions", req, &out)
	return out.Session, status == http.StatusCreated, AsDomain(err)
}

// List returns every session (GET /sessions).
func (s Sessions) List(ctx context.Context) ([]sentinel.Session, error) {
	var out struct {
		Sessions []sentinel.Session `json:"sessions"`
	}
	err := s.C.Do(ctx, http.MethodGet, "/sessions", nil, &out)
	return out.Sessions, AsDomain(err)
}

// Get returns one session (GET /sessions/{id}).
func (s Sessions) Get(ctx context.Context, id string) (sentinel.Session, error) {
	var out sessionAnswer
	err := s.C.Do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(id), nil, &out)
	return out.Session, AsDomain(err)
}

// End ends a session (DELETE /sessions/{id}?reason=).
func (s Sessions) End(ctx context.Context, id, reason string) (sentinel.Session, error) {
	path := "/sessions/" + url.PathEscape(id)
	if reason != "" {
		path += "?reason=" + url.QueryEscape(reason)
	}
	var out sessionAnswer
	err := s.C.Do(ctx, http.MethodDelete, path, nil, &out)
	return out.Session, AsDomain(err)
}

// ReportEvent records a lifecycle report (POST /sessions/{id}/events).
func (s Sessions) ReportEvent(ctx context.Context, id string, ev sentinel.SessionReport) error {
	return AsDomain(s.C.Do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(id)+"/events", ev, nil))
}

// RecordPR records PR activity (POST /sessions/{id}/prs).
func (s Sessions) RecordPR(ctx context.Context, id string, pr api.RecordPR) error {
	return AsDomain(s.C.Do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(id)+"/prs", pr, nil))
}

// Inboxes implements api.Inboxes over the REST API.
type Inboxes struct {
	C *Client
}

var _ api.Inboxes = Inboxes{}

// Send stores a message (POST /sessions/{to}/messages). Over REST the
// sender is the API caller: callerSession cannot be asserted and is
// ignored.
func (s Inboxes) Send(ctx context.Context, to string, req sentinel.SendMessage, _ string) (sentinel.Message, error) {
	var out struct {
		Message sentinel.Message `json:"message"`
	}
	err := s.C.Do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(to)+"/messages", req, &out)
	return out.Message, AsDomain(err)
}

// Read reads a page without waiting (GET /sessions/{id}/inbox).
func (s Inboxes) Read(ctx context.Context, q sentinel.InboxQuery) (api.InboxPage, error) {
	return s.get(ctx, q, 0)
}

// Wait long-polls (GET /sessions/{id}/inbox?wait=). The HTTP timeout is
// stretched past the wait.
func (s Inboxes) Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) (api.InboxPage, error) {
	if timeout < api.MinWait || timeout > api.MaxWait {
		return api.InboxPage{}, sentinel.Errorf(sentinel.CodeInvalidInput, "wait must be within 1s..49s")
	}
	return s.get(ctx, q, timeout)
}

// Done is never closed: a remote node's streams end with their requests.
func (s Inboxes) Done() <-chan struct{} { return nil }

// InboxPath returns the inbox route with the query's parameters.
func InboxPath(q sentinel.InboxQuery, wait time.Duration) string {
	v := url.Values{}
	if q.After != nil {
		v.Set("after", strconv.FormatUint(*q.After, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.CorrelationID != "" {
		v.Set("correlationId", q.CorrelationID)
	}
	if q.Ack {
		v.Set("ack", "true")
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if wait > 0 {
		v.Set("wait", strconv.FormatFloat(wait.Seconds(), 'f', -1, 64))
	}
	path := "/sessions/" + url.PathEscape(q.SessionID) + "/inbox"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	return path
}

func (s Inboxes) get(ctx context.Context, q sentinel.InboxQuery, wait time.Duration) (api.InboxPage, error) {
	c := s.C
	if wait > 0 && c.HTTP != nil && c.HTTP.Timeout > 0 && c.HTTP.Timeout < wait+15*time.Second {
		hc := *c.HTTP
		hc.Timeout = wait + 15*time.Second
		cc := *c
		cc.HTTP = &hc
		c = &cc
	}
	var page api.InboxPage
	err := c.Do(ctx, http.MethodGet, InboxPath(q, wait), nil, &page)
	return page, AsDomain(err)
}

// Follows implements api.Follows over the REST API.
type Follows struct {
	C *Client
}

var _ api.Follows = Follows{}

// Upsert creates or updates a follow (POST /follows, which answers the
// bare record: 201 created, 200 updated by key). An empty follower is
// filled with callerSession.
func (s Follows) Upsert(ctx context.Context, req sentinel.FollowRequest, callerSession string) (sentinel.Follow, bool, error) {
	if req.Follower == "" {
		req.Follower = callerSession
	}
	if req.Follower == "" {
		return sentinel.Follow{}, false, sentinel.Errorf(sentinel.CodeNoFollower,
			"no follower given and the caller has no session identity; pass follower (or start the bridge with --session)")
	}
	return s.Create(ctx, req)
}

// Create posts a follow as it is given (POST /follows): the node checks
// it, its follower included. A key the node holds updates that follow in
// place (created false).
func (s Follows) Create(ctx context.Context, req sentinel.FollowRequest) (sentinel.Follow, bool, error) {
	var f sentinel.Follow
	status, err := s.C.DoStatus(ctx, http.MethodPost, "/follows", req, &f)
	return f, status == http.StatusCreated, AsDomain(err)
}

// List returns follows (GET /follows?follower=).
func (s Follows) List(ctx context.Context, follower string) ([]sentinel.Follow, error) {
	path := "/follows"
	if follower != "" {
		path += "?follower=" + url.QueryEscape(follower)
	}
	var out struct {
		Follows []sentinel.Follow `json:"follows"`
	}
	err := s.C.Do(ctx, http.MethodGet, path, nil, &out)
	return out.Follows, AsDomain(err)
}

// Remove deletes a follow by id or key (DELETE /follows/{idOrKey}).
func (s Follows) Remove(ctx context.Context, idOrKey string) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := s.C.Do(ctx, http.MethodDelete, "/follows/"+url.PathEscape(idOrKey), nil, &out)
	return out.ID, AsDomain(err)
}

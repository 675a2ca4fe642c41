package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// memSessions is an in-memory api.Sessions.
type memSessions struct {
	mu sync.Mutex
	m  map[string]sentinel.Session
}

func (s *memSessions) Register(_ context.Context, req sentinel.RegisterSession) (sentinel.Session, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, had := s.m[req.ID]
	v := sentinel.Session{ID: req.ID, Status: sentinel.SessionRunning, Sentinel: true}
	s.m[req.ID] = v
	return v, !had, nil
}
func (s *memSessions) List(context.Context) ([]sentinel.Session, error) { return nil, nil }
func (s *memSessions) Get(_ context.Context, id string) (sentinel.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[id]
	if !ok {
		return sentinel.Session{}, sentinel.Errorf(sentinel.CodeSessionNotFound, "session not found")
	}
	return v, nil
}
func (s *memSessions) End(ctx context.Context, id, _ string) (sentinel.Session, error) {
	return s.Get(ctx, id)
}
func (s *memSessions) ReportEvent(context.Context, string, sentinel.SessionReport) error { return nil }
func (s *memSessions) RecordPR(context.Context, string, api.RecordPR) error              { return nil }

// memInboxes is an in-memory api.Inboxes whose Wait wakes on Send.
type memInboxes struct {
	mu   sync.Mutex
	msgs []sentinel.Message
	wake chan struct{}
	done chan struct{}
	// waits counts the Wait calls in progress.
	waits atomic.Int32
}

func newMemInboxes() *memInboxes {
	return &memInboxes{wake: make(chan struct{}), done: make(chan struct{})}
}

func (s *memInboxes) Send(_ context.Context, to string, req sentinel.SendMessage, _ string) (sentinel.Message, error) {
	s.mu.Lock()
	m := sentinel.Message{ID: "m" + req.Text, Seq: uint64(len(s.msgs) + 1), To: to, Text: req.Text, From: sentinel.MessageFrom{Relation: "human"}}
	s.msgs = append(s.msgs, m)
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
	return m, nil
}

func (s *memInboxes) Read(_ context.Context, q sentinel.InboxQuery) (api.InboxPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var after uint64
	if q.After != nil {
		after = *q.After
	}
	p := api.InboxPage{Next: after}
	for _, m := range s.msgs {
		if m.Seq > after {
			p.Messages = append(p.Messages, m)
			p.Next = m.Seq
		}
	}
	return p, nil
}

func (s *memInboxes) Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) (api.InboxPage, error) {
	s.waits.Add(1)
	defer s.waits.Add(-1)
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		wake := s.wake
		s.mu.Unlock()
		p, err := s.Read(ctx, q)
		if err != nil || len(p.Messages) > 0 {
			return p, err
		}
		select {
		case <-wake:
		case <-t.C:
			p.TimedOut = true
			return p, nil
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
}

func (s *memInboxes) Done() <-chan struct{} { return s.done }

func newServer(t *testing.T, in *memInboxes) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	httpapi.SessionRoutes(r, &memSessions{m: map[string]sentinel.Session{}})
	httpapi.InboxRoutes(r, in)
	httpapi.InboxReadRoutes(r, in, httpapi.StreamConfig{Heartbeat: time.Second})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

func TestSessionAndInboxHandlers(t *testing.T) {
	in := newMemInboxes()
	srv := newServer(t, in)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"register creates", "POST", "/sessions", `{"id":"s1"}`, 201, ""},
		{"register updates", "POST", "/sessions", `{"id":"s1"}`, 200, ""},
		{"bad id", "POST", "/sessions", `{"id":"a b"}`, 400, "invalid_session_id"},
		{"hook argv", "POST", "/sessions", `{"id":"s2","hooks":{"notify":["notify-send","{sessionId}"]}}`, 201, ""},
		{"hook with both", "POST", "/sessions", `{"id":"s3","hooks":{"notify":{"command":["x"],"url":"http://x"}}}`, 400, "invalid_input"},
		{"unknown field", "POST", "/sessions", `{"id":"s4","nope":1}`, 400, "unknown_field"},
		{"unknown session", "GET", "/sessions/zz", ``, 404, "session_not_found"},
		{"event", "POST", "/sessions/s1/events", `{"kind":"turn-end","excerpt":"x"}`, 202, ""},
		{"pr", "POST", "/sessions/s1/prs", `{"url":"https://github.com/o/r/pull/1","state":"open"}`, 202, ""},
		{"send", "POST", "/sessions/s1/messages", `{"text":"a"}`, 201, ""},
		{"from is never taken from the caller", "POST", "/sessions/s1/messages", `{"text":"a","from":{"relation":"system"}}`, 400, "invalid_input"},
		{"bad path id", "POST", "/sessions/a.b/messages", `{"text":"a"}`, 400, "invalid_session_id"},
		{"wait too long", "GET", "/sessions/s1/inbox?wait=50s", ``, 400, "invalid_input"},
		{"wait too short", "GET", "/sessions/s1/inbox?wait=999ms", ``, 400, "invalid_input"},
		{"bad after", "GET", "/sessions/s1/inbox?after=x", ``, 400, "invalid_input"},
		{"bad limit", "GET", "/sessions/s1/inbox?limit=501", ``, 400, "invalid_input"},
		{"read", "GET", "/sessions/s1/inbox?after=0", ``, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := do(t, tc.method, srv.URL+tc.path, tc.body)
			require.Equal(t, tc.status, status, "%v", out)
			if tc.code != "" {
				require.Equal(t, tc.code, out["error"])
			}
		})
	}
	_, out := do(t, "GET", srv.URL+"/sessions/s1/inbox?after=0", "")
	require.Len(t, out["messages"], 1)
	require.EqualValues(t, 1, out["next"])
}

func TestLongPollWakes(t *testing.T) {
	in := newMemInboxes()
	srv := newServer(t, in)
	got := make(chan map[string]any, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/sessions/s1/inbox?after=0&wait=30")
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		got <- out
	}()
	_, err := in.Send(context.Background(), "s1", sentinel.SendMessage{Text: "hi"}, "")
	require.NoError(t, err)
	select {
	case out := <-got:
		require.Len(t, out["messages"], 1)
	case <-time.After(20 * time.Second):
		t.Fatal("long-poll did not wake")
	}
}

func TestStreamResumesAndEndsOnShutdown(t *testing.T) {
	in := newMemInboxes()
	srv := newServer(t, in)
	for _, s := range []string{"a", "b", "c"} {
		_, err := in.Send(context.Background(), "s1", sentinel.SendMessage{Text: s}, "")
		require.NoError(t, err)
	}
	req, err := http.NewRequest("GET", srv.URL+"/sessions/s1/inbox/stream", nil)
	require.NoError(t, err)
	req.Header.Set("Last-Event-ID", "1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var ids, data []string
	var sawHeartbeat bool
	read := func(until func() bool) {
		deadline := time.After(20 * time.Second)
		for !until() {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "stream ended early")
				switch {
				case strings.HasPrefix(l, "id: "):
					ids = append(ids, strings.TrimPrefix(l, "id: "))
				case strings.HasPrefix(l, "data: "):
					data = append(data, l)
				case l == ": heartbeat":
					sawHeartbeat = true
				}
			case <-deadline:
				t.Fatal("stream stalled")
			}
		}
	}
	read(func() bool { return len(ids) == 2 })
	require.Equal(t, []string{"2", "3"}, ids)
	_, err = in.Send(context.Background(), "s1", sentinel.SendMessage{Text: "d"}, "")
	require.NoError(t, err)
	read(func() bool { return len(ids) == 3 })
	require.Equal(t, "4", ids[2])
	read(func() bool { return sawHeartbeat })
	close(in.done)
	for range lines {
	}
}

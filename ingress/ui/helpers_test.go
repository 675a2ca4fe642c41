package ui_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/ui"
)

const token = "s3cret-api-token"

// memSentinels is an in-memory api.Sentinels (the methods the dashboard
// calls; the others are the nil embedded interface and panic if called).
type memSentinels struct {
	api.Sentinels
	mu     sync.Mutex
	views  []sentinel.View
	parked []sentinel.Parked
}

func (m *memSentinels) add(v sentinel.View) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.views = append(m.views, v)
}

func (m *memSentinels) ListPage(_ context.Context, q api.SentinelQuery) (api.SentinelPage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []sentinel.View
	for _, v := range m.views {
		if (q.Status == "" || v.Status == q.Status) && (q.Provider == "" || v.Provider == q.Provider) {
			out = append(out, v)
		}
	}
	return api.SentinelPage{Sentinels: out}, nil
}

func (m *memSentinels) Get(_ context.Context, id string) (sentinel.View, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.views {
		if v.ID == id {
			return v, nil
		}
	}
	return sentinel.View{}, sentinel.Errorf(sentinel.CodeSentinelNotFound, "sentinel not found")
}

func (m *memSentinels) Status(_ context.Context, id string) (api.SentinelStatus, error) {
	return api.SentinelStatus{OK: true, Status: sentinel.StatusActive, Provider: "fake"}, nil
}

func (m *memSentinels) Adapters(context.Context) ([]api.Adapter, error) {
	return []api.Adapter{{Slug: "fake", Name: "Fake", Status: "ready", Version: "1"}}, nil
}

func (m *memSentinels) Parked(context.Context, string, int) ([]sentinel.Parked, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.parked), nil
}

// memExplainer is an in-memory api.Explainer recording replays.
type memExplainer struct {
	mu       sync.Mutex
	decs     []sentinel.Decision
	replayed []string
}

func (j *memExplainer) Decisions(_ context.Context, id string, _ int, _ uint64) (sentinel.DecisionPage, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return sentinel.DecisionPage{Decisions: slices.Clone(j.decs)}, nil
}

func (j *memExplainer) Event(context.Context, string) (api.EventStory, error) {
	return api.EventStory{}, sentinel.Errorf(sentinel.CodeNotFound, "no such event")
}

func (j *memExplainer) Replay(_ context.Context, id string, force bool) (api.Replay, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.replayed = append(j.replayed, id+map[bool]string{true: "+force", false: ""}[force])
	return api.Replay{ParkID: id, Decision: "delivered", Session: "s1"}, nil
}

func (j *memExplainer) replays() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.replayed)
}

// dash is a dashboard behind the real ingress stack (Host and Origin
// checks) on a loopback HTTP server, with a settable clock.
type dash struct {
	t    *testing.T
	srv  *httptest.Server
	h    *ui.Handler
	sens *memSentinels
	jr   *memExplainer

	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// sleep records the sign-in delays the dashboard asks for (no real wait).
func (d *dash) sleep(_ context.Context, by time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slept = append(d.slept, by)
}

// delays returns the sign-in delays asked for so far.
func (d *dash) delays() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.slept)
}

func (d *dash) clock() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

func (d *dash) advance(by time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.now = d.now.Add(by)
}

type ready struct{}

func (ready) Ready(context.Context) error { return nil }
func (ready) Writable() error             { return nil }

func newDash(t *testing.T, tls bool) *dash {
	t.Helper()
	return newDashWith(t, tls, token)
}

// newDashWith is newDash with the node token tok.
func newDashWith(t *testing.T, tls bool, tok string) *dash {
	t.Helper()
	return newDashListening(t, tls, tok, "")
}

// newDashOn is newDash (plain HTTP) listening on addr (host:port).
func newDashOn(t *testing.T, addr string) *dash {
	t.Helper()
	return newDashListening(t, false, token, addr)
}

// newDashListening builds the dashboard on addr ("" picks a port).
func newDashListening(t *testing.T, tls bool, tok, addr string) *dash {
	t.Helper()
	d := &dash{t: t, sens: &memSentinels{}, jr: &memExplainer{}, now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	h, err := ui.New(ui.Config{Token: tok, Services: ui.Services{Sentinels: d.sens, Explainer: d.jr},
		Refresh: 20 * time.Millisecond, Now: d.clock, Sleep: d.sleep})
	require.NoError(t, err)
	d.h = h
	handler := ingress.NewHandler(ingress.Config{Token: tok}, ready{}, ingress.Routes{UI: []ingress.Mounter{h.Mount}}, slog.New(slog.DiscardHandler))
	d.srv = httptest.NewUnstartedServer(handler)
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err)
		d.srv.Listener.Close()
		d.srv.Listener = ln
	}
	if tls {
		d.srv.StartTLS()
	} else {
		d.srv.Start()
	}
	t.Cleanup(func() { h.Close(); d.srv.Close() })
	return d
}

// client is a browser-like client: a cookie jar, no redirects followed.
func (d *dash) client() *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(d.t, err)
	c := *d.srv.Client() // a copy: each client has its own jar
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// answer is a read response.
type answer struct {
	status int
	header http.Header
	body   string
}

// do sends a request; origin "" sends none, "self" the server's own.
func (d *dash) do(c *http.Client, method, path, origin string, form url.Values) answer {
	d.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, d.srv.URL+path, body)
	require.NoError(d.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	switch origin {
	case "":
	case "self":
		req.Header.Set("Origin", d.srv.URL)
	default:
		req.Header.Set("Origin", origin)
	}
	resp, err := c.Do(req)
	require.NoError(d.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(d.t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// signIn signs c in and returns the CSRF token of its session.
func (d *dash) signIn(c *http.Client) string {
	d.t.Helper()
	a := d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {token}})
	require.Equal(d.t, http.StatusSeeOther, a.status, a.body)
	require.Equal(d.t, "/ui/sentinels", a.header.Get("Location"))
	return d.csrf(c)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token from a signed-in page.
func (d *dash) csrf(c *http.Client) string {
	d.t.Helper()
	a := d.do(c, http.MethodGet, "/ui/sentinels", "", nil)
	require.Equal(d.t, http.StatusOK, a.status, a.body)
	m := csrfField.FindStringSubmatch(a.body)
	require.NotNil(d.t, m, "the page carries a CSRF field")
	return m[1]
}

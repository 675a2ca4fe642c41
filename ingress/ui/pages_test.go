package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

// hostile is third-party text (a PR title, a comment) trying markup.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)>"'`

func view(id, label string) sentinel.View {
	return sentinel.View{ID: id, Provider: "fake", Status: sentinel.StatusActive, Label: label,
		Match:  []sentinel.Clause{{Subject: "github:acme/widgets#7"}},
		Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}, LastError: ""}
}

// sse reads a page's event stream.
type sse struct {
	t      *testing.T
	cancel context.CancelFunc
	sc     *bufio.Scanner
	resp   *http.Response
}

func (d *dash) openStream(c *http.Client, path string) *sse {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.srv.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	require.NoError(d.t, err)
	require.Equal(d.t, http.StatusOK, resp.StatusCode)
	require.Equal(d.t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sse{t: d.t, cancel: cancel, sc: bufio.NewScanner(resp.Body), resp: resp}
	s.sc.Buffer(make([]byte, 1<<20), 1<<20)
	d.t.Cleanup(func() { cancel(); resp.Body.Close() })
	return s
}

// waitRegion reads events until a region event whose HTML satisfies ok
// (the stream's context bounds the wait).
func (s *sse) waitRegion(id string, ok func(html string) bool) string {
	s.t.Helper()
	var event string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "region":
			var m struct{ ID, HTML string }
			require.NoError(s.t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m))
			if m.ID == id && ok(m.HTML) {
				return m.HTML
			}
		}
	}
	s.t.Fatalf("stream ended before region %s matched: %v", id, s.sc.Err())
	return ""
}

// TestUIHostileTextIsEscaped: a label with markup is shown as text in
// the page and in the stream's region.
func TestUIHostileTextIsEscaped(t *testing.T) {
	d := newDash(t, false)
	d.sens.add(view("sen_1", hostile))
	c := d.client()
	d.signIn(c)
	for _, path := range []string{"/ui/sentinels", "/ui/sentinels/sen_1"} {
		page := d.do(c, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, page.status, path)
		require.NotContains(t, page.body, "<script>alert", path)
		require.NotContains(t, page.body, "<img src=x", path)
		require.Contains(t, page.body, "&lt;script&gt;alert(1)&lt;/script&gt;", path)
	}
	html := d.openStream(c, "/ui/sentinels/events").waitRegion("region-sentinels", func(string) bool { return true })
	require.NotContains(t, html, "<script>alert")
	require.Contains(t, html, "&lt;script&gt;alert(1)&lt;/script&gt;")
}

// TestUISentinelsFilterAndSearch: status and provider filter through the
// API's query; q searches ids, labels and subjects; a bad status is a
// clear 400 on the page.
func TestUISentinelsFilterAndSearch(t *testing.T) {
	d := newDash(t, false)
	d.sens.add(view("sen_alpha", "first"))
	paused := view("sen_beta", "second")
	paused.Status = sentinel.StatusPaused
	d.sens.add(paused)
	c := d.client()
	d.signIn(c)
	rows := func(q string) string { return d.do(c, http.MethodGet, "/ui/sentinels?"+q, "", nil).body }
	require.Contains(t, rows(""), "sen_alpha")
	require.Contains(t, rows(""), "sen_beta")
	only := rows("status=paused")
	require.NotContains(t, only, `data-id="sen_alpha"`)
	require.Contains(t, only, `data-id="sen_beta"`)
	found := rows("q=FIRST")
	require.Contains(t, found, `data-id="sen_alpha"`)
	require.NotContains(t, found, `data-id="sen_beta"`)
	bad := d.do(c, http.MethodGet, "/ui/sentinels?status=bogus", "", nil)
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Contains(t, bad.body, "status must be one of")
	require.Equal(t, http.StatusNotFound, d.do(c, http.MethodGet, "/ui/sentinels/sen_nope", "", nil).status)
}

// TestUIStreamShowsNewSentinel: the sentinels page's stream sends the
// region again once a sentinel is added, without a reload; Close ends it.
func TestUIStreamShowsNewSentinel(t *testing.T) {
	d := newDash(t, false)
	d.sens.add(view("sen_old", ""))
	c := d.client()
	d.signIn(c)
	page := d.do(c, http.MethodGet, "/ui/sentinels", "", nil).body
	require.Contains(t, page, `data-stream="/ui/sentinels/events"`)
	s := d.openStream(c, "/ui/sentinels/events")
	s.waitRegion("region-sentinels", func(h string) bool { return strings.Contains(h, "sen_old") })
	d.sens.add(view("sen_new", "fresh"))
	s.waitRegion("region-sentinels", func(h string) bool { return strings.Contains(h, "sen_new") })

	d.h.Close()
	for s.sc.Scan() {
	}
	require.NoError(t, s.sc.Err(), "the stream ended cleanly when the dashboard closed")
}

// TestUIReplayButton: the parked page's Replay form posts with the CSRF
// token and answers the outcome; force is passed through; without the
// token nothing is replayed.
func TestUIReplayButton(t *testing.T) {
	d := newDash(t, false)
	d.sens.mu.Lock()
	d.sens.parked = []sentinel.Parked{{ID: "prk_7", SentinelID: "sen_1", Reason: "post_mortem", Ts: "2026-12-01T10:00:00Z",
		Event: &sentinel.Event{ID: "evt_1", Type: "github.check_suite.completed", Summary: hostile}}}
	d.sens.mu.Unlock()
	c := d.client()
	csrf := d.signIn(c)
	page := d.do(c, http.MethodGet, "/ui/parked", "", nil)
	require.Contains(t, page.body, `action="/ui/parked/prk_7/replay"`)
	require.NotContains(t, page.body, "<script>alert")

	require.Equal(t, http.StatusForbidden, d.do(c, http.MethodPost, "/ui/parked/prk_7/replay", "self", url.Values{}).status)
	require.Empty(t, d.jr.replays())
	a := d.do(c, http.MethodPost, "/ui/parked/prk_7/replay", "self", url.Values{"csrf": {csrf}, "force": {"on"}})
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Contains(t, a.body, "Replayed prk_7: delivered")
	require.Equal(t, []string{"prk_7+force"}, d.jr.replays())
}

// TestUIStreamEndsAtSignOut: a session's open stream says "expired" and
// ends once the session signs out.
func TestUIStreamEndsAtSignOut(t *testing.T) {
	d := newDash(t, false)
	c := d.client()
	csrf := d.signIn(c)
	s := d.openStream(c, "/ui/sentinels/events")
	s.waitRegion("region-sentinels", func(string) bool { return true })
	require.Equal(t, http.StatusOK, d.do(c, http.MethodPost, "/ui/logout", "self", url.Values{"csrf": {csrf}}).status)
	var expired bool
	for s.sc.Scan() {
		if s.sc.Text() == "event: expired" {
			expired = true
		}
	}
	require.NoError(t, s.sc.Err())
	require.True(t, expired, "the stream said the session ended")
}

// A sentinel whose provider was not ready when it was made is marked, in
// the list and on its page, with the reason and the fix (issue 29).
func TestUIMarksASentinelWithWarnings(t *testing.T) {
	d := newDash(t, false)
	v := view("sen_warned", "w")
	v.Warnings = []sentinel.Warning{{Code: sentinel.WarnProviderNotReady, Provider: "local-gh",
		Message: "local-gh is not ready: gh is not authenticated " + hostile, Fix: "run gh auth login"}}
	d.sens.add(v)
	d.sens.add(view("sen_fine", "f"))
	c := d.client()
	d.signIn(c)
	list := d.do(c, http.MethodGet, "/ui/sentinels", "", nil).body
	require.Contains(t, list, `data-warning="provider_not_ready"`)
	require.Contains(t, list, `h-warning`)
	require.NotContains(t, list, "<script>alert(1)")
	page := d.do(c, http.MethodGet, "/ui/sentinels/sen_warned", "", nil).body
	require.Contains(t, page, `data-warning="provider_not_ready"`)
	require.Contains(t, page, "run gh auth login")
	require.NotContains(t, d.do(c, http.MethodGet, "/ui/sentinels/sen_fine", "", nil).body, "data-warning")
}

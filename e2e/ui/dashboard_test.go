package ui_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/e2e/e2etest"
)

// TestDashboardInABrowser walks the dashboard in a real Chromium against
// the built binary: a wrong token is refused; sign-in; a sentinel created
// through the API appears in the list without a reload; an event pushed to
// the fake provider appears live in the session's inbox view; a parked
// (post-mortem) event is replayed with the Replay button; a cross-site
// form POST from a page on another loopback port, and a plain POST with a
// foreign Origin and the session cookie, are refused 403; sign-out. It
// saves a screenshot (SENTINEL_UI_SCREENSHOT=<file> keeps it; docs/dashboard.png
// is one).
func TestDashboardInABrowser(t *testing.T) {
	needBrowser(t)
	n := &node{Node: e2etest.Start(t, binary, t.TempDir()), t: t}
	const session, subject = "ui-s1", "github:acme/widgets#7"
	code, out := n.api(http.MethodPost, "/sessions", map[string]any{"id": session, "label": "widgets agent"})
	require.Equal(t, http.StatusCreated, code, "%v", out)
	n.createSentinel(map[string]any{"subject": "github:acme/gears#12", "sessionId": "ui-s2", "provider": "fake", "label": "gears CI"})

	tab := newBrowser(t)

	// A wrong token: the form again, with a clear error, still signed out.
	step(t, tab, "open the dashboard",
		chromedp.Navigate(n.URL+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#token")))
	loc, err := chromedp.Run(tab, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, n.URL+"/ui/login", loc, "signed out, the dashboard sends the browser to the form")
	step(t, tab, "submit a wrong token",
		chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token"),
		chromedp.Click(chromedp.CSS("#signin")),
		chromedp.WaitVisible(chromedp.CSS("#page-error")))
	require.Contains(t, text(t, tab, "#page-error"), "Wrong token")
	require.Equal(t, http.StatusUnauthorized, postLogin(t, n, "not-the-token"), "a wrong token answers 401")

	// Sign in with the keyboard alone: the field has the focus, Enter
	// submits.
	require.Equal(t, "token", eval(t, tab, `document.activeElement ? document.activeElement.id : ""`), "the token field has the focus")
	step(t, tab, "sign in",
		chromedp.KeyEvent(n.Token+"\r"),
		chromedp.WaitVisible(chromedp.CSS("#sentinels-table")))
	loc, _ = chromedp.Run(tab, chromedp.Location())
	require.Equal(t, n.URL+"/ui/sentinels", loc)
	require.NotContains(t, loc, n.Token)
	step(t, tab, "the stream connects", chromedp.Poll[chromedp.Void](`document.getElementById("live-status").textContent === "live"`))

	// A sentinel created through the API appears without a reload.
	markPage(t, tab)
	id := n.createSentinel(map[string]any{"subject": subject, "sessionId": session, "provider": "fake", "label": "widgets PR",
		"types": []string{"github.check_suite.*", "github.pull_request.*"}, "until": "never"})
	step(t, tab, "the new sentinel appears", chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+id+`"]`)))
	requireNotReloaded(t, tab)
	require.Contains(t, text(t, tab, `tr[data-id="`+id+`"]`), "widgets PR")

	// A keyboard user's focus survives a live update of the table.
	link := `a[href="/ui/sentinels/` + id + `"]`
	step(t, tab, "focus the sentinel's link", chromedp.Focus(chromedp.CSS(link)))
	other := n.createSentinel(map[string]any{"subject": "github:acme/sprockets#3", "sessionId": "ui-s3", "provider": "fake"})
	step(t, tab, "the table updates", chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+other+`"]`)))
	require.Equal(t, "/ui/sentinels/"+id, eval(t, tab, `document.activeElement ? (document.activeElement.getAttribute("href") || "") : ""`),
		"the focus stays on the same link")
	requireNotReloaded(t, tab)

	// An event pushed to the fake provider appears live in the inbox view;
	// its hostile summary is shown as text.
	step(t, tab, "open the session's inbox",
		chromedp.Navigate(n.URL+"/ui/sessions/"+session),
		chromedp.WaitVisible(chromedp.CSS("#region-inbox")),
		chromedp.Poll[chromedp.Void](`document.getElementById("live-status").textContent === "live"`))
	markPage(t, tab)
	const summary = `CI passed on widgets#7 <img src=x onerror="window.__xss=1">`
	n.push(id, "evt_ui_1", "github.check_suite.completed", subject, summary, false)
	step(t, tab, "the delivered event appears", chromedp.WaitVisible(chromedp.CSS(`#inbox-list li.msg`)))
	requireNotReloaded(t, tab)
	require.Contains(t, text(t, tab, "#inbox-list"), "CI passed on widgets#7")
	require.Equal(t, "no", eval(t, tab, `window.__xss ? "yes" : "no"`), "hostile text stays text")

	// Park one: the PR closes (delivered), then a late event is post-mortem.
	n.push(id, "evt_ui_2", "github.pull_request.closed", subject, "widgets#7 closed", true)
	n.push(id, "evt_ui_3", "github.check_suite.completed", subject, "late CI run on widgets#7", false)
	var parkID string
	bustest.Eventually(t, 30*time.Second, func() bool {
		_, p := n.api(http.MethodGet, "/parked?sentinel="+id, nil)
		if list, _ := p["parked"].([]any); len(list) > 0 {
			parkID, _ = list[0].(map[string]any)["id"].(string)
		}
		return parkID != ""
	}, "the late event parked")

	// Replay it with the button (force: the post-mortem rule).
	row := `tr[data-id="` + parkID + `"]`
	step(t, tab, "replay the parked event",
		chromedp.Navigate(n.URL+"/ui/parked"),
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.CSS(row+` input[name="force"]`)),
		chromedp.Click(chromedp.CSS(row+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#page-notice")))
	require.Contains(t, text(t, tab, "#page-notice"), "Replayed "+parkID+": delivered")
	bustest.Eventually(t, 30*time.Second, func() bool {
		_, in := n.api(http.MethodGet, "/sessions/"+session+"/inbox?limit=100", nil)
		msgs, _ := in["messages"].([]any)
		for _, m := range msgs {
			if d, _ := m.(map[string]any)["data"].(map[string]any); d != nil && d["id"] == "evt_ui_3" {
				return true
			}
		}
		return false
	}, "the replayed event is in the inbox")

	// The screenshot of the docs: the sentinels page, live.
	step(t, tab, "back to the sentinels", chromedp.Navigate(n.URL+"/ui/sentinels"), chromedp.WaitVisible(chromedp.CSS(`tr[data-id="`+id+`"]`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("live-status").textContent === "live"`))
	// Readable on a phone: at 390 px nothing makes the page scroll
	// sideways (wide tables scroll inside their own box).
	step(t, tab, "a phone's viewport", chromedp.EmulateViewport(390, 844))
	require.Equal(t, "fits", eval(t, tab, `document.documentElement.scrollWidth <= window.innerWidth ? "fits" : "overflows by " + (document.documentElement.scrollWidth - window.innerWidth)`))
	step(t, tab, "a desktop's viewport", chromedp.EmulateViewport(1280, 860))
	shot, err := chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS("body")))
	require.NoError(t, err)
	path := os.Getenv("SENTINEL_UI_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "dashboard.png")
	}
	require.NoError(t, os.WriteFile(path, shot, 0o644))
	t.Logf("screenshot: %s", path)

	// A cross-site form POST from a page of another origin (another
	// loopback port: same site, so the cookie goes along; the Origin check
	// refuses it).
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/ui/logout"><input name="csrf" value="guess"></form>`+
			`<script>document.getElementById("f").submit()</script>`, html.EscapeString(n.URL))
	}))
	t.Cleanup(evil.Close)
	step(t, tab, "a cross-site page posts to the dashboard",
		chromedp.Navigate(evil.URL),
		chromedp.Poll[chromedp.Void](`location.href.indexOf("/ui/logout") >= 0 && document.body && document.body.innerText.length > 0`))
	require.Contains(t, text(t, tab, "body"), "forbidden_origin")
	step(t, tab, "still signed in", chromedp.Navigate(n.URL+"/ui/sentinels"), chromedp.WaitVisible(chromedp.CSS("#sentinels-table")))

	// A plain POST with a foreign Origin and a valid session cookie and
	// CSRF token is refused too.
	cookie, csrf := signInHTTP(t, n)
	for _, origin := range []string{evil.URL, "http://attacker.example"} {
		form := url.Values{"csrf": {csrf}}
		req, _ := http.NewRequest(http.MethodPost, n.URL+"/ui/parked/"+parkID+"/replay", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "origin %s", origin)
	}

	// Sign out: the form, and the pages are closed again.
	step(t, tab, "sign out",
		chromedp.Click(chromedp.CSS("#logout")),
		chromedp.WaitVisible(chromedp.CSS("#page-notice")))
	require.Contains(t, text(t, tab, "#page-notice"), "Signed out")
	step(t, tab, "signed out, a page sends the browser to the form",
		chromedp.Navigate(n.URL+"/ui/sentinels"),
		chromedp.WaitVisible(chromedp.CSS("#token")))
	loc, _ = chromedp.Run(tab, chromedp.Location())
	require.Equal(t, n.URL+"/ui/login", loc)
}

// TestDashboardStreamsEndAtShutdown: an open dashboard stream does not
// hold a node's graceful stop: SIGTERM ends the stream and the process
// exits cleanly. (No browser needed: it runs without chromium.)
func TestDashboardStreamsEndAtShutdown(t *testing.T) {
	n := &node{Node: e2etest.Start(t, binary, t.TempDir()), t: t}
	cookie, _ := signInHTTP(t, n)
	req, _ := http.NewRequest(http.MethodGet, n.URL+"/ui/sentinels/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	first := make([]byte, 64)
	_, err = io.ReadAtLeast(resp.Body, first, 8)
	require.NoError(t, err, "the stream sends at once")

	took, err := n.Stop(30 * time.Second)
	require.NoError(t, err, "the node stops cleanly with a dashboard stream open\n%s", n.Logs.String())
	t.Logf("stopped in %s", took)
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ended with the node")
}

// TestDashboardPagesAnswer: every page answers a signed-in request
// against a real node with what it is for (the browser test walks the
// sentinels, session and parked pages; these are the rest), and an
// unknown sentinel is a 404 page. (No browser needed: it runs without chromium.)
func TestDashboardPagesAnswer(t *testing.T) {
	n := &node{Node: e2etest.Start(t, binary, t.TempDir()), t: t}
	code, out := n.api(http.MethodPost, "/sessions", map[string]any{"id": "pages-s1"})
	require.Equal(t, http.StatusCreated, code, "%v", out)
	code, out = n.api(http.MethodPost, "/follows", map[string]any{"follower": "pages-s1", "selector": map[string]any{"sessionIds": []string{"pages-s2"}}})
	require.Equal(t, http.StatusCreated, code, "%v", out)
	id := n.createSentinel(map[string]any{"subject": "github:acme/widgets#9", "sessionId": "pages-s1", "provider": "fake"})
	n.push(id, "evt_pages_1", "github.check_suite.completed", "github:acme/widgets#9", "CI on widgets#9", false)
	bustest.Eventually(t, 30*time.Second, func() bool {
		code, _ := n.api(http.MethodGet, "/events/evt_pages_1", nil)
		return code == http.StatusOK
	}, "the event is journaled")

	cookie, _ := signInHTTP(t, n)
	get := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, n.URL+path, nil)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for path, want := range map[string]string{
		"/ui/sessions":        `href="/ui/sessions/pages-s1"`,
		"/ui/follows":         `href="/ui/sessions/pages-s1"`,
		"/ui/adapters":        `data-slug="fake"`,
		"/ui/cluster":         "A single node",
		"/ui/sentinels/" + id: "evt_pages_1",
		"/ui/sentinels/" + id + "?event=evt_pages_1": `<span class="badge d-delivered">delivered</span>`,
		"/ui/sentinels?provider=fake&q=widgets%239":  `data-id="` + id + `"`,
	} {
		code, body := get(path)
		require.Equal(t, http.StatusOK, code, "%s\n%s", path, body)
		require.Contains(t, body, want, path)
		require.NotContains(t, body, `id="page-error"`, path)
	}
	code, body := get("/ui/sentinels/sen_01NOPE")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, `id="page-error"`)
}

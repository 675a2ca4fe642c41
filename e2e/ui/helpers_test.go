package ui_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

// fakeSecret signs the fake provider's push deliveries (its default).
const fakeSecret = "fake-secret"

// node wraps a running `sentinel serve` with API helpers.
type node struct {
	*e2etest.Node
	t *testing.T
}

// api calls the node's API with the bearer token and decodes the answer.
func (n *node) api(method, path string, body any) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(n.t, err)
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.URL+path, rd)
	require.NoError(n.t, err)
	req.Header.Set("Authorization", "Bearer "+n.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(n.t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// createSentinel creates a fake-provider sentinel and returns its id.
func (n *node) createSentinel(body map[string]any) string {
	n.t.Helper()
	code, out := n.api(http.MethodPost, "/sentinels", body)
	require.Equal(n.t, http.StatusCreated, code, "%v", out)
	return out["sentinel"].(map[string]any)["id"].(string)
}

// push delivers one signed CloudEvent to the fake provider's push
// ingress of sentinel id.
func (n *node) push(id, evtID, typ, subject, summary string, terminal bool) {
	n.t.Helper()
	body, err := json.Marshal(map[string]any{
		"specversion": "1.0", "id": evtID, "source": "//agentproto.local/sentinel/fake", "type": typ,
		"subject": subject, "subjects": []string{subject, "github:acme/widgets"}, "time": time.Now().UTC().Format(time.RFC3339),
		"summary": summary, "terminal": terminal, "data": map[string]any{"id": evtID},
	})
	require.NoError(n.t, err)
	m := hmac.New(sha256.New, []byte(fakeSecret))
	m.Write(body)
	req, err := http.NewRequest(http.MethodPost, n.URL+"/inbound/sentinel-fk-"+strings.ToLower(id), bytes.NewReader(body))
	require.NoError(n.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fake-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(n.t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(n.t, http.StatusOK, resp.StatusCode, "push of %s", evtID)
}

// newBrowser starts a headless Chromium for the test (no sandbox as
// root, where Chromium refuses to start with one) and returns its tab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.WindowSize(1280, 860),
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelTab(); cancelAlloc(); cancel() })
	// The first run starts the browser and binds it to tab's life (not to
	// a step's timeout).
	require.NoError(t, chromedp.Do(tab), "start chromium")
	return tab
}

// step runs browser steps and fails the test with the page's location and
// text when one fails.
func step(t *testing.T, tab context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(tab, chromedp.Location())
		body, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, body)
	}
}

// text reads an element's text.
func text(t *testing.T, tab context.Context, css string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	require.NoError(t, err, css)
	return s
}

// eval evaluates a string expression in the page.
func eval(t *testing.T, tab context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(tab, chromedp.Evaluate[string](expr))
	require.NoError(t, err, expr)
	return s
}

// markPage sets a marker on the page's window object: it survives until
// the page reloads or navigates, so finding it later proves the page
// updated in place.
func markPage(t *testing.T, tab context.Context) {
	t.Helper()
	eval(t, tab, `window.__sentinelMark = "still-here"`)
}

func requireNotReloaded(t *testing.T, tab context.Context) {
	t.Helper()
	require.Equal(t, "still-here", eval(t, tab, `window.__sentinelMark || "reloaded"`), "the page updated without a reload")
}

// postLogin posts a token to the sign-in form as the dashboard's own page
// would and returns the status (redirects not followed).
func postLogin(t *testing.T, n *node, token string) int {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, n.URL+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", n.URL)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// signInHTTP signs in over plain HTTP and returns the session cookie and
// the CSRF token of a page.
func signInHTTP(t *testing.T, n *node) (*http.Cookie, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, n.URL+"/ui/login", strings.NewReader(url.Values{"token": {n.Token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", n.URL)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	req, _ = http.NewRequest(http.MethodGet, n.URL+"/ui/parked", nil)
	req.AddCookie(cookies[0])
	resp, err = c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	_, rest, ok := strings.Cut(string(page), `name="csrf" value="`)
	require.True(t, ok, "the page carries a CSRF token")
	csrf, _, _ := strings.Cut(rest, `"`)
	return cookies[0], csrf
}

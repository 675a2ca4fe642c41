package ui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/ui"
)

// TestUISecurityHeaders: every dashboard answer (the form, a redirect, a
// static file, a page) carries the strict CSP and the framing, referrer
// and sniffing headers.
func TestUISecurityHeaders(t *testing.T) {
	d := newDash(t, false)
	c := d.client()
	d.signIn(c)
	for _, path := range []string{"/ui/login", "/ui/", "/ui/static/app.js", "/ui/static/app.css", "/ui/sentinels"} {
		a := d.do(c, http.MethodGet, path, "", nil)
		require.Less(t, a.status, 400, path)
		require.Equal(t, ui.ContentSecurityPolicy, a.header.Get("Content-Security-Policy"), path)
		require.Contains(t, a.header.Get("Content-Security-Policy"), "default-src 'self'")
		require.Contains(t, a.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		require.NotContains(t, a.header.Get("Content-Security-Policy"), "unsafe-inline")
		require.Equal(t, "DENY", a.header.Get("X-Frame-Options"), path)
		require.Equal(t, "no-referrer", a.header.Get("Referrer-Policy"), path)
		require.Equal(t, "nosniff", a.header.Get("X-Content-Type-Options"), path)
	}
	page := d.do(c, http.MethodGet, "/ui/sentinels", "", nil).body
	require.NotContains(t, page, "<script>", "no inline script")
	require.NotContains(t, page, "style=", "no inline style")
	require.Contains(t, page, `<meta name="viewport"`)
}

// TestUISignIn: without a cookie a page redirects to the form and a
// stream or a write answers 401; a wrong token answers the form again
// with 401 and a clear error (never echoing what was typed); the right
// token sets an HttpOnly, SameSite=Strict, Path=/ui cookie that does not
// hold the token, and the pages answer.
func TestUISignIn(t *testing.T) {
	d := newDash(t, false)
	c := d.client()

	a := d.do(c, http.MethodGet, "/ui/sentinels", "", nil)
	require.Equal(t, http.StatusSeeOther, a.status)
	require.Equal(t, "/ui/login", a.header.Get("Location"))
	req, _ := http.NewRequest(http.MethodGet, d.srv.URL+"/ui/sentinels/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	// The stream's 401 is for Accept: text/event-stream (EventSource);
	// any other GET of it is a page load: 303 to the form (#31 item 12).
	plain := d.do(c, http.MethodGet, "/ui/sentinels/events", "", nil)
	require.Equal(t, http.StatusSeeOther, plain.status)
	require.Equal(t, "/ui/login", plain.header.Get("Location"))
	require.Equal(t, http.StatusUnauthorized, d.do(c, http.MethodPost, "/ui/logout", "self", url.Values{}).status)

	form := d.do(c, http.MethodGet, "/ui/login", "", nil)
	require.Equal(t, http.StatusOK, form.status)
	require.Contains(t, form.body, `<label for="token">`)
	require.Contains(t, form.body, `name="token" type="password"`)

	bad := d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {"guess-<b>1</b>"}})
	require.Equal(t, http.StatusUnauthorized, bad.status)
	require.Contains(t, bad.body, "Wrong token")
	require.NotContains(t, bad.body, "guess")
	require.Empty(t, bad.header.Values("Set-Cookie"))

	good := d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {token}})
	require.Equal(t, http.StatusSeeOther, good.status)
	cookies := (&http.Response{Header: good.header}).Cookies()
	require.Len(t, cookies, 1)
	ck := cookies[0]
	require.Equal(t, ui.CookieName, ck.Name)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/ui", ck.Path)
	require.Equal(t, 3600, ck.MaxAge, "a sign-in lasts an hour")
	require.False(t, ck.Secure, "plain HTTP: not Secure")
	require.NotContains(t, ck.Value, token)
	require.NotContains(t, good.header.Get("Location"), token)

	page := d.do(c, http.MethodGet, "/ui/sentinels", "", nil)
	require.Equal(t, http.StatusOK, page.status)
	require.NotContains(t, page.body, token, "the token never appears in a page")
	// Signed in, the form sends the browser on.
	require.Equal(t, http.StatusSeeOther, d.do(c, http.MethodGet, "/ui/login", "", nil).status)
}

// TestUISecureCookieOverTLS: over TLS the cookie is __Host-sentinel_ui:
// Secure, Path=/, no Domain (a browser then sends it only to this host
// over https, never to a plain-http server on another port), and it
// authenticates the pages.
func TestUISecureCookieOverTLS(t *testing.T) {
	d := newDash(t, true)
	c := d.client()
	a := d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {token}})
	require.Equal(t, http.StatusSeeOther, a.status, a.body)
	cookies := (&http.Response{Header: a.header}).Cookies()
	require.Len(t, cookies, 1)
	require.Equal(t, ui.SecureCookieName, cookies[0].Name)
	require.True(t, cookies[0].Secure)
	require.Equal(t, "/", cookies[0].Path)
	require.Empty(t, cookies[0].Domain)
	require.Equal(t, http.StatusOK, d.do(c, http.MethodGet, "/ui/sentinels", "", nil).status)
	// The plain name is not read over TLS.
	req, _ := http.NewRequest(http.MethodGet, d.srv.URL+"/ui/sentinels", nil)
	req.AddCookie(&http.Cookie{Name: ui.CookieName, Value: cookies[0].Value})
	resp, err := d.srv.Client().Transport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
}

// TestUISignInRateLimited: wrong tokens are counted per address, and past
// five a minute every further wrong one is slowed (a growing, bounded
// delay) and answered 429 with Retry-After. The right token still signs
// in while the address is limited: behind a proxy every client shares one
// address, and five wrong guesses by anyone must not lock the operator
// out.
func TestUISignInRateLimited(t *testing.T) {
	d := newDash(t, false)
	c := d.client()
	for i := 0; i < 5; i++ {
		require.Equal(t, http.StatusUnauthorized, d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {"wrong"}}).status)
	}
	require.Empty(t, d.delays(), "wrong tokens within the limit are not slowed")
	var waits []time.Duration
	for i := 0; i < 3; i++ {
		a := d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {"wrong"}})
		require.Equal(t, http.StatusTooManyRequests, a.status)
		require.NotEmpty(t, a.header.Get("Retry-After"))
		require.Contains(t, a.body, "Too many wrong tokens")
		got := d.delays()
		require.Len(t, got, i+1, "each wrong token past the limit is slowed")
		waits = append(waits, got[i])
	}
	require.Less(t, waits[0], waits[1])
	require.Less(t, waits[1], waits[2])

	// The operator, from the same address, while it is limited.
	other := d.client()
	d.signIn(other)
	require.Len(t, d.delays(), 3, "the right token is not slowed")
	// A success forgets the address's failures.
	require.Equal(t, http.StatusUnauthorized, d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {"wrong"}}).status)
}

// The delay of a wrong token past the limit never exceeds the cap.
func TestUISignInDelayIsBounded(t *testing.T) {
	d := newDash(t, false)
	c := d.client()
	for i := 0; i < 30; i++ {
		d.do(c, http.MethodPost, "/ui/login", "self", url.Values{"token": {"wrong"}})
	}
	got := d.delays()
	require.NotEmpty(t, got)
	require.Equal(t, ui.MaxSignInDelay, got[len(got)-1])
}

// TestUISessionCookieChecks: a tampered, expired, or other-token cookie
// does not authenticate (the page redirects to the form and the cookie
// is cleared).
func TestUISessionCookieChecks(t *testing.T) {
	d := newDash(t, false)
	c := d.client()
	d.signIn(c)
	u, _ := url.Parse(d.srv.URL + "/ui/")
	value := c.Jar.Cookies(u)[0].Value

	withCookie := func(v string) answer {
		req, _ := http.NewRequest(http.MethodGet, d.srv.URL+"/ui/sentinels", nil)
		req.AddCookie(&http.Cookie{Name: ui.CookieName, Value: v})
		resp, err := d.srv.Client().Transport.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		return answer{status: resp.StatusCode, header: resp.Header}
	}
	require.Equal(t, http.StatusOK, withCookie(value).status)
	payload, mac, _ := strings.Cut(value, ".")
	flipped := []byte(mac)
	flipped[0] ^= 1
	for _, bad := range []string{payload + "." + string(flipped), payload, "x.y", strings.Repeat("a", 600)} {
		a := withCookie(bad)
		require.Equal(t, http.StatusSeeOther, a.status, bad)
		require.Contains(t, a.header.Get("Set-Cookie"), "Max-Age=0", "a bad cookie is cleared")
	}

	// A cookie minted for another token (before a rotation, or by a node
	// of another service) is refused.
	other := newDashWith(t, false, "another-token")
	oc := other.client()
	require.Equal(t, http.StatusSeeOther, other.do(oc, http.MethodPost, "/ui/login", "self", url.Values{"token": {"another-token"}}).status)
	ou, _ := url.Parse(other.srv.URL + "/ui/")
	require.Equal(t, http.StatusSeeOther, withCookie(oc.Jar.Cookies(ou)[0].Value).status, "another token's cookie")

	d.advance(ui.DefaultSessionTTL)
	require.Equal(t, http.StatusSeeOther, withCookie(value).status, "expired")
}

// TestUIWritesNeedCSRFAndSameOrigin: a cookie-authenticated write without
// the CSRF token, with a wrong one, with another session's, from a
// foreign Origin (the ingress check: 403 forbidden_origin) or with no
// Origin at all is refused 403; with both, sign-out works and revokes
// the session.
func TestUIWritesNeedCSRFAndSameOrigin(t *testing.T) {
	d := newDash(t, false)
	c := d.client()
	csrf := d.signIn(c)
	other := d.client()
	otherCSRF := d.signIn(other)
	require.NotEqual(t, csrf, otherCSRF, "the token is bound to the session")

	require.Equal(t, http.StatusForbidden, d.do(c, http.MethodPost, "/ui/logout", "self", url.Values{}).status)
	require.Equal(t, http.StatusForbidden, d.do(c, http.MethodPost, "/ui/logout", "self", url.Values{"csrf": {"x" + csrf[1:]}}).status)
	require.Equal(t, http.StatusForbidden, d.do(c, http.MethodPost, "/ui/logout", "self", url.Values{"csrf": {otherCSRF}}).status)
	cross := d.do(c, http.MethodPost, "/ui/logout", "http://evil.example", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusForbidden, cross.status)
	require.Contains(t, cross.body, "forbidden_origin")
	require.Equal(t, http.StatusForbidden, d.do(c, http.MethodPost, "/ui/logout", "", url.Values{"csrf": {csrf}}).status)
	require.Equal(t, http.StatusForbidden, d.do(c, http.MethodPost, "/ui/login", "http://evil.example", url.Values{"token": {token}}).status)

	// Still signed in after every refusal.
	require.Equal(t, http.StatusOK, d.do(c, http.MethodGet, "/ui/sentinels", "", nil).status)
	u, _ := url.Parse(d.srv.URL + "/ui/")
	old := c.Jar.Cookies(u)[0].Value

	out := d.do(c, http.MethodPost, "/ui/logout", "self", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusOK, out.status)
	require.Contains(t, out.body, "Signed out")
	require.Contains(t, out.header.Get("Set-Cookie"), "Max-Age=0")
	require.Equal(t, http.StatusSeeOther, d.do(c, http.MethodGet, "/ui/sentinels", "", nil).status)

	// The old cookie, replayed, no longer authenticates; the other
	// session still does.
	req, _ := http.NewRequest(http.MethodGet, d.srv.URL+"/ui/sentinels", nil)
	req.AddCookie(&http.Cookie{Name: ui.CookieName, Value: old})
	resp, err := d.srv.Client().Transport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, http.StatusOK, d.do(other, http.MethodGet, "/ui/sentinels", "", nil).status)
}

// TestUICookieIsBoundToTheListenersPort: browsers send a host's cookies
// to every port of it, so a cookie minted on one port (a node, or any
// server another port of 127.0.0.1 runs) reaches the others. A cookie
// carries the port of the listener that minted it, in its signed value,
// and a listener on another port refuses it, though it holds the same
// token.
func TestUICookieIsBoundToTheListenersPort(t *testing.T) {
	a, b := newDash(t, false), newDash(t, false)
	c := a.client()
	a.signIn(c)
	ua, _ := url.Parse(a.srv.URL + "/ui/")
	cookie := c.Jar.Cookies(ua)[0]

	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/ui/sentinels", nil)
	req.AddCookie(cookie)
	resp, err := b.srv.Client().Transport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "a cookie of another port is refused")
	require.Contains(t, resp.Header.Get("Set-Cookie"), "Max-Age=0")
}

// TestUICookieWorksOnEveryNodeOfTheService: the nodes of one service
// share the API token, so a session signed in on one node is accepted by
// another that answers on the same port (behind one load balancer, or a
// node restarted in place), its CSRF token too. A node of another token
// refuses it (TestUISessionCookieChecks).
func TestUICookieWorksOnEveryNodeOfTheService(t *testing.T) {
	a := newDash(t, false)
	c := a.client()
	csrf := a.signIn(c)
	ua, _ := url.Parse(a.srv.URL + "/ui/")
	cookie := c.Jar.Cookies(ua)[0]
	addr := a.srv.Listener.Addr().String()
	a.srv.Close()
	b := newDashOn(t, addr)

	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/ui/sentinels", nil)
	req.AddCookie(cookie)
	resp, err := b.srv.Client().Transport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "another node of the service on the same port accepts the session")

	form := url.Values{"csrf": {csrf}}
	req, _ = http.NewRequest(http.MethodPost, b.srv.URL+"/ui/logout", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.srv.URL)
	req.AddCookie(cookie)
	resp, err = b.srv.Client().Transport.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "and its CSRF token")
}

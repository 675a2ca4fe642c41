package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// Client defaults.
const (
	DefaultCacheEntries   = 10000
	DefaultMaxBody        = 32 << 20
	DefaultRequestTimeout = 30 * time.Second
	// SecondaryLimitWait is the wait after a secondary rate limit that
	// gives no Retry-After (GitHub asks for at least a minute).
	SecondaryLimitWait = time.Minute
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// BaseURL is the REST root (default APIBase of the token source's host,
	// else https://api.github.com).
	BaseURL string
	// HTTP is the client requests go through (default: a client with a 30 s
	// timeout over http.DefaultTransport, which honours HTTPS_PROXY and
	// SSL_CERT_FILE as gh does).
	HTTP *http.Client
	// Token supplies the credential (required).
	Token TokenSource
	// Now is the clock used for rate-limit windows (default time.Now).
	Now func() time.Time
	// UserAgent is sent on every request (default "agentproto-sentinel").
	UserAgent string
	// MaxCacheEntries bounds the ETag cache (default 10000 URLs).
	MaxCacheEntries int
	// MaxPages bounds the pages GetPages fetches of one list (default
	// DefaultMaxPages).
	MaxPages int
	// Credential is the non-secret id of the client's credential in rate
	// samples (default "token"): never the token itself.
	Credential string
	// Observe, when set, is told the rate-limit headers of every answer
	// (ratesample.go), outside the client's lock.
	Observe RateObserver
	// Hold, when set, says until when the credential is paused (the quota
	// governor's cluster-wide secondary-limit pause, which any node's
	// answer may have started): a call before then is refused without a
	// request, as during the client's own rate-limit waits.
	Hold HoldFunc
}

// HoldFunc says until when a credential (its non-secret id) is paused; the
// zero time is no pause. It must not block.
type HoldFunc func(credential string) time.Time

// Client is an in-process GitHub REST client. Every GET is conditional:
// the ETag and body of the last 200 for a URL are cached and sent back as
// If-None-Match, so an unchanged resource answers 304 and costs no quota.
// It records X-RateLimit-* and refuses to send while a rate limit is in
// force. It is safe for concurrent use.
type Client struct {
	base     string
	http     *http.Client
	token    TokenSource
	now      func() time.Time
	ua       string
	maxEnts  int
	maxPages int
	cred     string
	observe  RateObserver
	hold     HoldFunc

	mu    sync.Mutex
	cache map[string]cacheEntry
	stats Stats
}

type cacheEntry struct {
	etag  string
	body  []byte
	link  string
	items int
}

// Stats are the client's counters and last known rate limit.
type Stats struct {
	// Requests is the number of HTTP requests sent.
	Requests int64 `json:"requests"`
	// NotModified is the number of 304 answers (free of quota).
	NotModified int64 `json:"notModified"`
	// QuotaUsed counts the answers that cost a rate-limit point (every
	// answer but a 304).
	QuotaUsed int64 `json:"quotaUsed"`
	// Refused counts calls refused locally during a rate-limit wait.
	Refused int64 `json:"refused"`
	// RateLimit, RateRemaining and RateReset are the last X-RateLimit-*
	// values seen (RateRemaining is -1 before any).
	RateLimit     int       `json:"rateLimit"`
	RateRemaining int       `json:"rateRemaining"`
	RateReset     time.Time `json:"rateReset,omitzero"`
	// BlockedUntil is when a rate-limit wait ends (zero when none).
	BlockedUntil time.Time `json:"blockedUntil,omitzero"`
}

// NewClient returns a client for cfg.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.Token == nil {
		return nil, errors.New("github client: a token source is required")
	}
	if cfg.BaseURL == "" {
		host := DefaultHost
		if a, ok := cfg.Token.(*Auth); ok {
			host = a.Host()
		}
		cfg.BaseURL = APIBase(host)
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: DefaultRequestTimeout}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "agentproto-sentinel"
	}
	if cfg.MaxCacheEntries <= 0 {
		cfg.MaxCacheEntries = DefaultCacheEntries
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = DefaultMaxPages
	}
	if cfg.Credential == "" {
		cfg.Credential = "token"
	}
	return &Client{
		base: strings.TrimSuffix(cfg.BaseURL, "/"), http: cfg.HTTP, token: cfg.Token,
		now: cfg.Now, ua: cfg.UserAgent, maxEnts: cfg.MaxCacheEntries, maxPages: cfg.MaxPages,
		cred: cfg.Credential, observe: cfg.Observe, hold: cfg.Hold,
		cache: map[string]cacheEntry{}, stats: Stats{RateRemaining: -1},
	}, nil
}

// BaseURL returns the REST root the client talks to.
func (c *Client) BaseURL() string { return c.base }

// Response is the answer to a GET. On a 304 Status is 304, NotModified is
// true and Body is the cached body of the last 200 for the URL.
type Response struct {
	Status      int
	Header      http.Header
	Body        []byte
	ETag        string
	NotModified bool
	// Date is the server's Date header (zero when absent): GitHub's clock.
	Date time.Time
	// URL is the absolute URL requested.
	URL string
	// Link is the Link header: this answer's, or on a 304 that carries
	// none, the one cached with the body.
	Link string
	// Items is the number of elements when Body is a JSON array, else -1.
	Items int
}

// Stats returns a copy of the counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Get fetches path (relative to the REST root, query included)
// conditionally. Errors are *providers.Error values: rate limits
// (ReasonRateLimited, Retryable, RetryAfter) also block further calls until
// they pass, without a request; 5xx are ReasonServer and retryable; a 401
// re-reads the token once and retries, then is ReasonAuth naming
// `gh auth login`; network failures are ReasonNetwork and retryable. A path
// with a "." or ".." segment is ReasonInvalid, without a request
// (CheckRESTPath).
func (c *Client) Get(ctx context.Context, path string) (*Response, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	if err := CheckRESTPath(path); err != nil {
		return nil, err
	}
	url := c.base + "/" + strings.TrimPrefix(path, "/")
	for attempt := 0; ; attempt++ {
		resp, err := c.do(ctx, url, path)
		var pe *providers.Error
		if attempt == 0 && errors.As(err, &pe) && pe.Reason == providers.ReasonAuth && resp != nil {
			c.token.Invalidate()
			continue
		}
		return resp, err
	}
}

// GetJSON is Get followed by decoding the body into v. It returns the
// response so callers can see NotModified and ETag.
func (c *Client) GetJSON(ctx context.Context, path string, v any) (*Response, error) {
	resp, err := c.Get(ctx, path)
	if err != nil {
		return resp, err
	}
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return resp, &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("GET %s: invalid JSON: %v", path, err)}
	}
	return resp, nil
}

// do sends one request. A non-nil *Response with a ReasonAuth error means
// GitHub answered 401.
func (c *Client) do(ctx context.Context, url, path string) (*Response, error) {
	if err := c.refuse(path); err != nil {
		return nil, err
	}
	tok, err := c.token.Token(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", AcceptJSON)
	req.Header.Set(APIVersionHeader, APIVersion)
	req.Header.Set("User-Agent", c.ua)
	c.mu.Lock()
	cached, hasCache := c.cache[url]
	c.stats.Requests++
	c.mu.Unlock()
	if hasCache {
		req.Header.Set("If-None-Match", cached.etag)
	}
	hr, err := c.http.Do(req)
	if err != nil {
		return nil, &providers.Error{Reason: providers.ReasonNetwork, Retryable: true,
			Message: fmt.Sprintf("GET %s: %s", path, RedactToken(err.Error(), tok))}
	}
	defer hr.Body.Close()
	body, err := io.ReadAll(io.LimitReader(hr.Body, DefaultMaxBody+1))
	c.report(hr.StatusCode, hr.Header, body, hasCache)
	if err != nil {
		return nil, &providers.Error{Reason: providers.ReasonNetwork, Retryable: true,
			Message: fmt.Sprintf("GET %s: reading body: %s", path, RedactToken(err.Error(), tok))}
	}
	if len(body) > DefaultMaxBody {
		return nil, &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("GET %s: body exceeds %d bytes", path, DefaultMaxBody)}
	}
	resp := &Response{Status: hr.StatusCode, Header: hr.Header, Body: body, ETag: hr.Header.Get("ETag"),
		URL: url, Link: hr.Header.Get("Link"), Items: -1}
	if d, err := http.ParseTime(hr.Header.Get("Date")); err == nil {
		resp.Date = d
	}
	return c.settle(path, url, resp, cached, hasCache)
}

// settle records the rate limit, updates the cache and classifies.
func (c *Client) settle(path, url string, resp *Response, cached cacheEntry, hasCache bool) (*Response, error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordRate(resp.Header)
	if resp.Status == http.StatusNotModified {
		c.stats.NotModified++
		if !hasCache {
			return nil, &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("GET %s: 304 without a cached body", path)}
		}
		resp.Body, resp.NotModified, resp.Items = cached.body, true, cached.items
		if resp.ETag == "" {
			resp.ETag = cached.etag
		}
		if resp.Link == "" {
			resp.Link = cached.link
		}
		return resp, nil
	}
	c.stats.QuotaUsed++
	if resp.Status >= 200 && resp.Status < 300 {
		resp.Items = arrayLen(resp.Body)
		if resp.ETag != "" {
			if len(c.cache) >= c.maxEnts {
				for k := range c.cache { // evict an arbitrary entry
					delete(c.cache, k)
					break
				}
			}
			c.cache[url] = cacheEntry{etag: resp.ETag, body: resp.Body, link: resp.Link, items: resp.Items}
		}
		return resp, nil
	}
	return resp, c.failure("GET "+path, resp, now)
}

// failure classifies an answer >= 400 and starts a rate-limit wait when it
// is one (mu must be held). label ("GET path") starts the message.
func (c *Client) failure(label string, resp *Response, now time.Time) *providers.Error {
	e := providers.ClassifyHTTP(resp.Status, resp.Header, now)
	msg := apiMessage(resp.Body)
	if resp.Status == http.StatusForbidden && e.Reason == providers.ReasonForbidden &&
		strings.Contains(strings.ToLower(msg), "rate limit") {
		e.Reason, e.Retryable, e.RetryAfter = providers.ReasonRateLimited, true, SecondaryLimitWait
	}
	e.Message = fmt.Sprintf("%s: HTTP %d", label, resp.Status)
	if msg != "" {
		e.Message += ": " + RedactToken(msg, "")
	}
	switch e.Reason {
	case providers.ReasonRateLimited:
		until := now.Add(e.RetryAfter)
		if until.After(c.stats.BlockedUntil) {
			c.stats.BlockedUntil = until
		}
	case providers.ReasonAuth:
		e.Message += ": GitHub rejected the token from " + sourceOf(c.token) + ": " + tokenHint(sourceOf(c.token))
	}
	return e
}

// refuse returns a rate-limit error without a request while a wait is in
// force: after a 403/429 rate limit, while the primary quota is spent
// until its reset, or while Hold pauses the credential.
func (c *Client) refuse(path string) error {
	now := c.now()
	var held time.Time
	if c.hold != nil {
		held = c.hold(c.cred)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	until := c.stats.BlockedUntil
	if c.stats.RateRemaining == 0 && c.stats.RateReset.After(until) {
		until = c.stats.RateReset
	}
	what := "GitHub rate limit"
	if held.After(until) {
		until, what = held, "GitHub secondary rate limit pause of credential "+c.cred+" (cluster-wide)"
	}
	if !now.Before(until) {
		return nil
	}
	c.stats.Refused++
	wait := until.Sub(now)
	return &providers.Error{
		Reason: providers.ReasonRateLimited, Retryable: true, RetryAfter: wait,
		Message: fmt.Sprintf("%s: %s in force for %s more; no request sent", strings.TrimPrefix(path, "/"), what, wait.Round(time.Second)),
	}
}

// recordRate stores X-RateLimit-* (mu must be held).
func (c *Client) recordRate(h http.Header) {
	if v, ok := atoiHeader(h, "X-RateLimit-Remaining"); ok {
		c.stats.RateRemaining = v
	}
	if v, ok := atoiHeader(h, "X-RateLimit-Limit"); ok {
		c.stats.RateLimit = v
	}
	if v, ok := atoiHeader(h, "X-RateLimit-Reset"); ok {
		c.stats.RateReset = time.Unix(int64(v), 0)
	}
}

func atoiHeader(h http.Header, k string) (int, bool) {
	s := h.Get(k)
	if s == "" {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' || n > 1<<40 {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}

// apiMessage extracts GitHub's {"message": ...} from an error body, bounded.
func apiMessage(body []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	return truncate(strings.TrimSpace(m.Message), 200)
}

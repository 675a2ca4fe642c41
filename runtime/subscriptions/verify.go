package subscriptions

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
)

// verifiedKey is the bucket key caching a (principal, url) verification.
func verifiedKey(principal, url string) string {
	sum := sha256.Sum256([]byte(principal + "\x00" + url))
	return "verified." + hex.EncodeToString(sum[:12])
}

// verify confirms the endpoint's intent before any delivery: an
// allowlisted URL, a cached verification of this principal, or the
// challenge handshake (a signed verification envelope whose nonce the
// endpoint echoes in a 2xx body, compared in constant time). Challenges
// are rate-limited per destination host (mcp_events.verify_per_host_per_minute,
// on this node): past the limit the subscribe is ResourceExhausted and
// nothing is sent, so the node cannot be used to flood a host.
func (w *Webhooks) verify(ctx context.Context, principal, subID string, d *delivery) error {
	s := w.svc
	if allowlisted(s.cfg.CallbackAllowlist, d.URL) {
		return nil
	}
	key := verifiedKey(principal, d.URL)
	if e, err := s.store.kv.Get(ctx, key); err == nil {
		if until, perr := strconv.ParseInt(string(e.Value()), 10, 64); perr == nil && until > s.now().UnixMilli() {
			return nil
		}
	}
	if u, err := url.Parse(d.URL); err == nil && !w.limiter.allow(strings.ToLower(u.Hostname()), s.now()) {
		return sentinel.Errorf(sentinel.CodeTooManyVerifications,
			"too many verification challenges to this host; try again in a minute")
	}
	challenge := nonce()
	body, _ := json.Marshal(map[string]string{"type": "verification", "challenge": challenge})
	res := post(ctx, w.client, d.URL, subID, controlID("verification"), []string{d.Secret}, body, s.now())
	if res.Category != "" {
		return sentinel.Errorf(sentinel.CodeCallbackPrefix+res.Category, "the callback endpoint failed verification (%s)", res.Category)
	}
	var echo struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(res.Body, &echo) != nil || subtle.ConstantTimeCompare([]byte(echo.Challenge), []byte(challenge)) != 1 {
		return sentinel.Errorf(sentinel.CodeCallbackPrefix+"challenge_failed", "the callback endpoint did not echo the challenge")
	}
	until := s.now().Add(s.cfg.TTLMax).UnixMilli()
	if _, err := s.store.kv.Put(ctx, key, []byte(strconv.FormatInt(until, 10))); err != nil {
		return fmt.Errorf("cache the endpoint verification: %w", err)
	}
	return nil
}

// hostLimiter is a token bucket per destination host: perMinute tokens a
// minute, as many in a burst. It holds at most maxHosts hosts (full
// buckets are forgotten first; past that, the oldest).
type hostLimiter struct {
	perMinute int

	mu    sync.Mutex
	hosts map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxHosts = 10000

func newHostLimiter(perMinute int) *hostLimiter {
	return &hostLimiter{perMinute: perMinute, hosts: map[string]*bucket{}}
}

// allow takes a token of host's bucket, reporting whether one was left.
func (l *hostLimiter) allow(host string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	burst := float64(l.perMinute)
	b, ok := l.hosts[host]
	if !ok {
		if len(l.hosts) >= maxHosts {
			l.prune(now)
		}
		b = &bucket{tokens: burst, last: now}
		l.hosts[host] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(burst, b.tokens+elapsed.Minutes()*burst)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// prune forgets the hosts whose bucket has refilled, else the oldest.
func (l *hostLimiter) prune(now time.Time) {
	var oldest string
	for h, b := range l.hosts {
		if now.Sub(b.last) >= time.Minute {
			delete(l.hosts, h)
		} else if oldest == "" || b.last.Before(l.hosts[oldest].last) {
			oldest = h
		}
	}
	if len(l.hosts) >= maxHosts && oldest != "" {
		delete(l.hosts, oldest)
	}
}

package ui

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Failed sign-in limits: at most maxFailures wrong tokens per client
// address within failureWindow are answered at once; past that every
// further wrong token is slowed (firstDelay, doubling, at most
// MaxSignInDelay) and answered 429 until the window of the first failure
// ends. A right token is never slowed nor refused: the limit is on
// guessing, and behind a proxy every client shares one address.
const (
	firstDelay    = 250 * time.Millisecond
	maxFailures   = 5
	failureWindow = time.Minute
	// maxClients bounds the per-address table; when it is full (many
	// addresses guessing at once) every new address shares one bucket.
	maxClients = 4096
)

// MaxSignInDelay caps the delay of one wrong token past the limit.
const MaxSignInDelay = 5 * time.Second

// overflowKey is the shared bucket of addresses the table has no room for.
const overflowKey = "*"

// failures is one address's failed sign-ins since start.
type failures struct {
	start time.Time
	n     int
}

// loginLimiter counts failed sign-ins per client address.
type loginLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*failures
}

func newLoginLimiter(now func() time.Time) *loginLimiter {
	return &loginLimiter{now: now, m: map[string]*failures{}}
}

// clientKey is the address a request counts against (the peer's IP; the
// node does not trust forwarding headers).
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// blocked reports whether key has used up its failures, and for how long
// it stays blocked.
func (l *loginLimiter) blocked(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	f := l.entry(key, now, false)
	if f == nil || f.n < maxFailures || now.Sub(f.start) >= failureWindow {
		return false, 0
	}
	return true, f.start.Add(failureWindow).Sub(now)
}

// fail records a failed sign-in of key and returns how long to slow its
// answer: 0 within the limit, else firstDelay doubled per failure past
// it, at most MaxSignInDelay.
func (l *loginLimiter) fail(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.entry(key, l.now(), true)
	f.n++
	over := f.n - maxFailures
	if over <= 0 {
		return 0
	}
	d := firstDelay
	for i := 1; i < over && d < MaxSignInDelay; i++ {
		d *= 2
	}
	return min(d, MaxSignInDelay)
}

// reset forgets key's failures (a successful sign-in).
func (l *loginLimiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, key)
}

// entry returns key's live entry (a lapsed window starts over), creating
// it when create is set; it must be called with mu held.
func (l *loginLimiter) entry(key string, now time.Time, create bool) *failures {
	if f, ok := l.m[key]; ok {
		if now.Sub(f.start) >= failureWindow {
			f.start, f.n = now, 0
		}
		return f
	}
	if !create {
		if f, ok := l.m[overflowKey]; ok && len(l.m) >= maxClients-1 {
			return f
		}
		return nil
	}
	// One slot stays for the overflow bucket.
	if len(l.m) >= maxClients-1 {
		for k, f := range l.m {
			if now.Sub(f.start) >= failureWindow {
				delete(l.m, k)
			}
		}
	}
	if len(l.m) >= maxClients-1 {
		key = overflowKey
		if f, ok := l.m[key]; ok {
			return f
		}
	}
	f := &failures{start: now}
	l.m[key] = f
	return f
}

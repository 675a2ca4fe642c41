package githubtest

import (
	"net/http"
	"strconv"
	"time"
)

// limiter is the fake's enforced rate limit: a primary limit per
// credential and window, and a secondary limit on bursts.
type limiter struct {
	limit  int
	window time.Duration
	start  time.Time
	used   map[string]int
	// refused counts requests answered 403 for the primary limit.
	refused int

	burst      int
	burstPer   time.Duration
	retryAfter time.Duration
	recent     map[string][]time.Time
	secondary  int
}

// SetRateLimit makes the fake enforce limit points per credential (each
// token, App JWT or installation token) and window on its clock, as GitHub
// does: every answer but a 304 costs a point, X-RateLimit-* headers tell
// the credential's own numbers and a credential past its limit is answered
// 403 "API rate limit exceeded" with X-RateLimit-Remaining 0 until the
// window resets (Advance).
func (s *Server) SetRateLimit(limit int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim = &limiter{limit: limit, window: window, start: s.now, used: map[string]int{}, recent: map[string][]time.Time{}}
}

// SetSecondaryLimit makes a credential that sends more than burst requests
// within per (on the fake's clock) meet a secondary limit: 403 "You have
// exceeded a secondary rate limit" with Retry-After, or, when retryAfter
// is 0, without it (as GitHub often answers: the client is to wait at least
// a minute, then back off). The answer carries the credential's
// X-RateLimit-* headers, its remaining points above 0. Call SetRateLimit
// first.
func (s *Server) SetSecondaryLimit(burst int, per, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lim.burst, s.lim.burstPer, s.lim.retryAfter = burst, per, retryAfter
}

// RateLimited returns how many requests the fake refused for the primary
// limit and for the secondary limit.
func (s *Server) RateLimited() (primary, secondary int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lim == nil {
		return 0, 0
	}
	return s.lim.refused, s.lim.secondary
}

// UsedBy returns the points the credential in an Authorization value
// ("token X", "Bearer X") spent in the current window.
func (s *Server) UsedBy(auth string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lim == nil {
		return 0
	}
	s.lim.roll(s.now)
	return s.lim.used[credOf(auth)]
}

func credOf(auth string) string {
	for i := 0; i < len(auth); i++ {
		if auth[i] == ' ' {
			return auth[i+1:]
		}
	}
	return auth
}

// roll starts a new window when the current one ended.
func (l *limiter) roll(now time.Time) {
	for !now.Before(l.start.Add(l.window)) {
		l.start = l.start.Add(l.window)
		clear(l.used)
	}
}

// refuse answers a request over a limit, or nothing (mu must be held).
func (s *Server) refuse(auth string) (reply, bool) {
	l := s.lim
	if l == nil {
		return reply{}, false
	}
	l.roll(s.now)
	cred := credOf(auth)
	if l.burst > 0 {
		cut := s.now.Add(-l.burstPer)
		keep := l.recent[cred][:0]
		for _, at := range l.recent[cred] {
			if at.After(cut) {
				keep = append(keep, at)
			}
		}
		l.recent[cred] = append(keep, s.now)
		if len(l.recent[cred]) > l.burst {
			l.secondary++
			rep := jsonReply(http.StatusForbidden, msgBody("You have exceeded a secondary rate limit. Please wait a few minutes before you try again."))
			if l.retryAfter > 0 {
				rep.header = http.Header{"Retry-After": {strconv.Itoa(int(l.retryAfter / time.Second))}}
			}
			return rep, true
		}
	}
	if l.used[cred] >= l.limit {
		l.refused++
		return jsonReply(http.StatusForbidden, msgBody("API rate limit exceeded for installation.")), true
	}
	return reply{}, false
}

// charge counts an answer against its credential and sets its headers
// (mu must be held).
func (s *Server) charge(auth string, status int, h http.Header) {
	l := s.lim
	if l == nil {
		return
	}
	cred := credOf(auth)
	if status != http.StatusNotModified && !(status == http.StatusForbidden && l.used[cred] >= l.limit) {
		l.used[cred]++
	}
	used := min(l.used[cred], l.limit)
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(l.limit-used))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(l.start.Add(l.window).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

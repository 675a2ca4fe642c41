package github

import (
	"net/http"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// RateSample is what one GitHub answer says of its credential's rate
// limit: the X-RateLimit-* headers, and whether the answer was a secondary
// limit (403/429 with Retry-After, or GitHub's documented message) and for
// how long GitHub asks to wait. It never carries the credential itself:
// Credential is a non-secret id ("token", "app", "installation:<id>").
type RateSample struct {
	Credential string
	Resource   string
	Limit      int
	Remaining  int
	Used       int
	Reset      time.Time
	// Known is false when the answer carried no X-RateLimit-Remaining.
	Known bool
	// Status is the HTTP status of the answer.
	Status int
	// Free is a 304 to a conditional request: GitHub charges no point.
	Free bool
	// Secondary is a secondary rate limit; RetryAfter how long GitHub
	// asks the credential to wait (SecondaryLimitWait when it does not
	// say).
	Secondary  bool
	RetryAfter time.Duration
}

// RateObserver receives the RateSample of every answer. It must not block:
// it is called on the request's goroutine.
type RateObserver func(RateSample)

// report builds the sample of one answer and hands it to the observer.
func (c *Client) report(status int, h http.Header, conditional bool) {
	if c.observe == nil {
		return
	}
	c.observe(SampleOf(c.cred, status, h, conditional, c.now()))
}

// SampleOf reads one answer's rate-limit headers (status and header as
// received; conditional when the request carried If-None-Match).
func SampleOf(credential string, status int, h http.Header, conditional bool, now time.Time) RateSample {
	s := RateSample{Credential: credential, Status: status, Resource: h.Get("X-RateLimit-Resource")}
	if s.Resource == "" {
		s.Resource = "core"
	}
	if v, ok := atoiHeader(h, "X-RateLimit-Remaining"); ok {
		s.Remaining, s.Known = v, true
	}
	s.Limit, _ = atoiHeader(h, "X-RateLimit-Limit")
	s.Used, _ = atoiHeader(h, "X-RateLimit-Used")
	if v, ok := atoiHeader(h, "X-RateLimit-Reset"); ok {
		s.Reset = time.Unix(int64(v), 0)
	}
	s.Free = status == http.StatusNotModified && conditional
	if status == http.StatusForbidden || status == http.StatusTooManyRequests {
		e := providers.ClassifyHTTP(status, h, now)
		switch {
		case h.Get("Retry-After") != "":
			s.Secondary, s.RetryAfter = true, e.RetryAfter
		case e.Reason == providers.ReasonRateLimited && s.Known && s.Remaining > 0:
			s.Secondary, s.RetryAfter = true, SecondaryLimitWait
		case status == http.StatusTooManyRequests:
			s.Secondary, s.RetryAfter = true, SecondaryLimitWait
		}
		if s.Secondary && s.RetryAfter <= 0 {
			s.RetryAfter = SecondaryLimitWait
		}
	}
	return s
}

// IsSecondaryMessage reports GitHub's documented secondary-limit message
// in an error body ("You have exceeded a secondary rate limit").
func IsSecondaryMessage(body []byte) bool {
	return strings.Contains(strings.ToLower(string(body)), "secondary rate limit")
}

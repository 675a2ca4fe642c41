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

// report builds the sample of one answer (its body read, for GitHub's
// secondary-limit message) and hands it to the observer.
func (c *Client) report(status int, h http.Header, body []byte, conditional bool) {
	if c.observe == nil {
		return
	}
	c.observe(SampleOf(c.cred, status, h, body, conditional, c.now()))
}

// SampleOf reads one answer's rate-limit headers (status, header and body
// as received; conditional when the request carried If-None-Match).
//
// A 403 or 429 is a secondary limit when it carries Retry-After (wait that
// long), when it is a 429, or when its body has GitHub's documented message
// ("You have exceeded a secondary rate limit", IsSecondaryMessage) or a
// rate-limit message while X-RateLimit-Remaining is not 0; without
// Retry-After the wait is SecondaryLimitWait (GitHub: wait at least a
// minute, then back off exponentially, which the quota governor does). A
// 403 with X-RateLimit-Remaining 0 and no such message is the primary
// limit spent: the headers' reset says when it ends.
func SampleOf(credential string, status int, h http.Header, body []byte, conditional bool, now time.Time) RateSample {
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
		switch {
		case h.Get("Retry-After") != "":
			s.Secondary, s.RetryAfter = true, providers.ClassifyHTTP(status, h, now).RetryAfter
		case status == http.StatusTooManyRequests, IsSecondaryMessage(body):
			s.Secondary = true
		case s.Known && s.Remaining > 0 && strings.Contains(strings.ToLower(apiMessage(body)), "rate limit"):
			s.Secondary = true
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

package github_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestSampleOfSecondaryLimits(t *testing.T) {
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	reset := now.Add(30 * time.Minute)
	hdr := func(remaining string, extra ...string) http.Header {
		h := http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {remaining}, "X-Ratelimit-Reset": {itoa(reset.Unix())}}
		for i := 0; i+1 < len(extra); i += 2 {
			h.Set(extra[i], extra[i+1])
		}
		return h
	}
	const secondaryBody = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`
	for _, tc := range []struct {
		name      string
		status    int
		h         http.Header
		body      string
		secondary bool
		wait      time.Duration
	}{
		{"documented message without Retry-After", 403, hdr("4200"), secondaryBody, true, github.SecondaryLimitWait},
		{"documented message with Retry-After", 403, hdr("4200", "Retry-After", "90"), secondaryBody, true, 90 * time.Second},
		{"documented message with remaining 0", 403, hdr("0"), secondaryBody, true, github.SecondaryLimitWait},
		{"rate-limit message with points left", 403, hdr("4200"), `{"message":"You have triggered a rate limit"}`, true, github.SecondaryLimitWait},
		{"429 alone", 429, hdr("4200"), `{}`, true, github.SecondaryLimitWait},
		{"primary limit spent", 403, hdr("0"), `{"message":"API rate limit exceeded for installation ID 1."}`, false, 0},
		{"plain forbidden", 403, hdr("4200"), `{"message":"Resource not accessible by integration"}`, false, 0},
		{"ok", 200, hdr("4200"), `[]`, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := github.SampleOf("token", tc.status, tc.h, []byte(tc.body), false, now)
			require.Equal(t, tc.secondary, s.Secondary)
			require.Equal(t, tc.wait, s.RetryAfter)
			require.True(t, s.Known)
		})
	}
}

// TestClientReportsASecondaryLimitWithoutRetryAfter: the fake answers a
// burst 403 with GitHub's secondary-limit message, its rate-limit headers
// (points left) and no Retry-After; both client paths (Get and API) report
// a secondary limit of SecondaryLimitWait to the observer.
func TestClientReportsASecondaryLimitWithoutRetryAfter(t *testing.T) {
	for _, path := range []string{"get", "api"} {
		t.Run(path, func(t *testing.T) {
			s := githubtest.New(t, githubtest.Options{})
			s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
			s.SetRateLimit(5000, time.Hour)
			s.SetSecondaryLimit(1, time.Minute, 0)
			var mu sync.Mutex
			var samples []github.RateSample
			c, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.StaticToken(s.Token()), Now: s.Now,
				Credential: "token", Observe: func(r github.RateSample) { mu.Lock(); samples = append(samples, r); mu.Unlock() }})
			require.NoError(t, err)
			ctx := context.Background()
			get := func(p string) error {
				if path == "get" {
					_, err := c.Get(ctx, p)
					return err
				}
				_, _, _, err := c.API(ctx, http.MethodGet, p, nil)
				return err
			}
			require.NoError(t, get("repos/acme/widgets/pulls/7"))
			require.Error(t, get("repos/acme/widgets/pulls"))
			_, secondary := s.RateLimited()
			require.Equal(t, 1, secondary)
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, samples, 2)
			require.False(t, samples[0].Secondary)
			last := samples[1]
			require.Equal(t, http.StatusForbidden, last.Status)
			require.True(t, last.Known)
			require.Positive(t, last.Remaining, "a secondary limit leaves primary points")
			require.True(t, last.Secondary)
			require.Equal(t, github.SecondaryLimitWait, last.RetryAfter)
		})
	}
}

package localgh

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseCursorTolerant(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		snapshot bool
		failures int
	}{
		{name: "empty", in: ""},
		{name: "garbage", in: "{not json"},
		{name: "wrong type", in: `{"snapshot":"x"}`},
		{name: "bad state", in: `{"snapshot":{"state":"weird"}}`},
		{name: "negative failures", in: `{"consecutiveFailures":-3}`},
		{name: "huge failures", in: `{"consecutiveFailures":100000}`, failures: 64},
		{name: "legacy reference cursor", in: `{"snapshot":{"fetchedAt":"2026-01-01T00:00:00Z","state":"merged","reviews":[],"headSha":"abc"},"consecutiveFailures":0}`, snapshot: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := parsePRCursor(tc.in)
			require.Equal(t, tc.snapshot, c.Snapshot != nil)
			require.Equal(t, tc.failures, c.Failures)
		})
	}
	r := parseRepoCursor(`{"prs":{"x":{"snapshot":{"state":"open"}},"07":{"snapshot":{"state":"open"}},"7":{"snapshot":{"state":"open"}},"8":null}}`)
	require.Len(t, r.PRs, 1)
	require.Contains(t, r.PRs, "7")
}

func TestBackoffSchedule(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	var h health
	for _, want := range []time.Duration{30, 60, 120, 240, 300, 300, 300} {
		h.fail(now, "x", 0)
		require.Equal(t, now.Add(want*time.Second).UnixMilli(), h.NextRetryAtMs)
	}
	h = health{}
	h.fail(now, "rate limited", 10*time.Minute)
	require.Equal(t, now.Add(10*time.Minute).UnixMilli(), h.NextRetryAtMs, "Retry-After wins when longer")
}

func FuzzParseCursor(f *testing.F) {
	f.Add(`{"v":1,"snapshot":{"state":"open","headSha":"abc","checks":{"build":{"c":"success","r":5}}},"comments":{"from":"2026-11-01T10:00:00Z","since":"2026-11-01T10:00:00Z","maxId":3}}`)
	f.Fuzz(func(t *testing.T, in string) {
		c := parsePRCursor(in)
		if c.Failures < 0 || c.Failures > 64 {
			t.Fatalf("failures %d", c.Failures)
		}
		if c.Snapshot != nil && !validState(c.Snapshot.State) {
			t.Fatalf("state %q", c.Snapshot.State)
		}
		out := encode(c)
		if again := encode(parsePRCursor(out)); again != out {
			t.Fatalf("not stable: %s vs %s", out, again)
		}
		r := parseRepoCursor(in)
		for k, pr := range r.PRs {
			if pr == nil || !validState(pr.Snap.State) || k == "" {
				t.Fatalf("bad pr %q", k)
			}
		}
		out = encode(r)
		if again := encode(parseRepoCursor(out)); again != out {
			t.Fatalf("repo not stable: %s vs %s", out, again)
		}
	})
}

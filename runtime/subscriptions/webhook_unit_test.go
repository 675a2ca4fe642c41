package subscriptions

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The suspension window rolls: it counts the current bucket and the one
// before, and forgets both after two windows.
func TestStatsRollingWindow(t *testing.T) {
	const w = 1000
	var st Stats
	for i := 0; i < 3; i++ {
		st.add(int64(i), w, true)
	}
	require.True(t, st.failing(3, 0.95))
	require.False(t, st.failing(4, 0.95), "too few attempts to judge")
	st.add(1500, w, false) // next bucket: the three failures are the previous one
	require.Equal(t, 1, st.Attempts)
	require.Equal(t, 3, st.PrevFailures)
	require.False(t, st.failing(4, 0.95), "3 of 4 failed: under the rate")
	require.True(t, st.failing(4, 0.75))
	st.add(5000, w, true) // two windows later: forgotten
	require.Equal(t, Stats{WindowStartMs: 5000, Attempts: 1, Failures: 1}, st)
}

func TestServiceOutcomeSuspends(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SuspendMinAttempts = 2
	s := &Service{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	now := time.Unix(1000, 0)
	rec := &Record{ID: "sub_x", Status: DeliveryStatus{Active: true}}
	s.outcome(rec, now, "http_5xx")
	require.True(t, rec.Status.Active)
	require.NotNil(t, rec.Status.FailedSince)
	s.outcome(rec, now.Add(time.Second), "timeout")
	require.False(t, rec.Status.Active)
	require.Equal(t, now.Add(time.Second).UnixMilli(), rec.SuspendedMs)
	require.Equal(t, "timeout", *rec.Status.LastError)
	s.outcome(rec, now.Add(2*time.Second), "")
	require.Nil(t, rec.Status.LastError)
	require.Nil(t, rec.Status.FailedSince)
	require.NotNil(t, rec.Status.LastDeliveryAt)
}

// The challenge limiter allows perMinute a minute per host, refills with
// time, and keeps hosts apart.
func TestHostLimiter(t *testing.T) {
	l := newHostLimiter(2)
	now := time.Unix(0, 0)
	require.True(t, l.allow("a.example", now))
	require.True(t, l.allow("a.example", now))
	require.False(t, l.allow("a.example", now))
	require.True(t, l.allow("b.example", now), "another host has its own bucket")
	require.False(t, l.allow("a.example", now.Add(20*time.Second)))
	require.True(t, l.allow("a.example", now.Add(30*time.Second)), "half a minute refills one")
	for i := 0; i < maxHosts+10; i++ {
		l.allow(string(rune('a'+i%26))+time.Duration(i).String(), now)
	}
	require.LessOrEqual(t, len(l.hosts), maxHosts, "bounded")
}

func TestGrant(t *testing.T) {
	cfg := DefaultConfig()
	s := &Service{cfg: cfg}
	for _, c := range []struct {
		raw  string
		want time.Duration
	}{
		{"", cfg.TTLDefault},
		{"null", cfg.TTLMax},
		{"1", cfg.TTLMin},
		{"600000", 10 * time.Minute},
		{"-5", cfg.TTLMin},
		{"99999999999999999", cfg.TTLMax},
	} {
		got, err := s.grant(json.RawMessage(c.raw))
		require.NoError(t, err, c.raw)
		require.Equal(t, c.want, got, c.raw)
	}
	for _, bad := range []string{`"1h"`, `1.5`, `true`, `{}`} {
		_, err := s.grant(json.RawMessage(bad))
		require.Error(t, err, bad)
	}
	s.cfg.NoExpiry = true
	got, err := s.grant(json.RawMessage("null"))
	require.NoError(t, err)
	require.Zero(t, got, "no expiry")
}

func TestStartOf(t *testing.T) {
	start, trunc := startOf(10, 5, 1, 20)
	require.Equal(t, uint64(10), start)
	require.False(t, trunc)
	start, trunc = startOf(3, 5, 1, 20)
	require.Equal(t, uint64(3), start, "before the subscription: the feed after it is replayed")
	require.True(t, trunc)
	start, trunc = startOf(10, 5, 15, 20)
	require.Equal(t, uint64(10), start)
	require.True(t, trunc, "retention dropped events after it")
	start, trunc = startOf(30, 5, 1, 20)
	require.Equal(t, uint64(20), start)
	require.True(t, trunc, "past the head")
}

func TestBackoff(t *testing.T) {
	base := 100 * time.Millisecond
	require.Equal(t, base, backoff(base, 1))
	require.Equal(t, 2*base, backoff(base, 2))
	require.Equal(t, 8*base, backoff(base, 4))
	require.Equal(t, 10*base, backoff(base, 9))
}

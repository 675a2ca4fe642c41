package subscriptions

import (
	"time"

	"github.com/agentproto/sentinel"
)

// Stats count a webhook subscription's POSTs in a rolling window, kept as
// the current bucket and the one before it (each one window long): the
// rate is over both, so the window rolls without a log of every attempt.
type Stats struct {
	WindowStartMs int64 `json:"windowStartMs,omitempty"`
	Attempts      int   `json:"attempts,omitempty"`
	Failures      int   `json:"failures,omitempty"`
	PrevAttempts  int   `json:"prevAttempts,omitempty"`
	PrevFailures  int   `json:"prevFailures,omitempty"`
}

// add counts one POST at nowMs.
func (st *Stats) add(nowMs, windowMs int64, failed bool) {
	switch age := nowMs - st.WindowStartMs; {
	case age >= 2*windowMs:
		*st = Stats{WindowStartMs: nowMs}
	case age >= windowMs:
		*st = Stats{WindowStartMs: st.WindowStartMs + windowMs, PrevAttempts: st.Attempts, PrevFailures: st.Failures}
	}
	st.Attempts++
	if failed {
		st.Failures++
	}
}

// failing reports a sustained failure: at least minAttempts POSTs in the
// window, failing at rate or more.
func (st Stats) failing(minAttempts int, rate float64) bool {
	a, f := st.Attempts+st.PrevAttempts, st.Failures+st.PrevFailures
	return a >= minAttempts && float64(f) >= rate*float64(a)
}

// outcome records one POST of rec at now in its stats and deliveryStatus
// (category "" is a success) and suspends delivery on a sustained failure.
func (s *Service) outcome(rec *Record, now time.Time, category string) {
	rec.Stats.add(now.UnixMilli(), s.cfg.SuspendWindow.Milliseconds(), category != "")
	at := sentinel.FormatTime(now)
	if category == "" {
		rec.Status.LastDeliveryAt, rec.Status.LastError, rec.Status.FailedSince = &at, nil, nil
		return
	}
	rec.Status.LastError = &category
	if rec.Status.FailedSince == nil {
		rec.Status.FailedSince = &at
	}
	if rec.Status.Active && rec.Stats.failing(s.cfg.SuspendMinAttempts, s.cfg.SuspendFailureRate) {
		rec.Status.Active, rec.SuspendedMs = false, now.UnixMilli()
		s.log.Warn("mcp events webhook delivery suspended", "subscription", rec.ID, "lastError", category)
	}
}

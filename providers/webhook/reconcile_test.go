package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestReconcileRedeliversFailedDeliveryOnce(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	q := h.provider("node-b")
	hd := h.create(p, "github:acme/widgets#1")
	sibling := h.create(p, "github:acme/widgets")
	id := h.liveHook(testRepo).ID

	h.gh.AddDelivery(testRepo, id, githubtest.Delivery{GUID: "g-old", Event: "pull_request", StatusCode: 500})
	h.gh.Advance(github.RedeliveryHorizon)
	h.gh.AddDelivery(testRepo, id, githubtest.Delivery{GUID: "g-ok", Event: "pull_request"})
	failed := h.gh.AddDelivery(testRepo, id, githubtest.Delivery{GUID: "g-fail", Event: "check_suite", StatusCode: 503})
	h.gh.AddDelivery(testRepo, id, githubtest.Delivery{GUID: "g-healed", Event: "issue_comment", StatusCode: 500})
	h.gh.AddDelivery(testRepo, id, githubtest.Delivery{GUID: "g-healed", Event: "issue_comment"})
	h.gh.AddDelivery(testRepo, id, githubtest.Delivery{GUID: "g-ping", Event: "ping", StatusCode: 404})

	// Two nodes and two sentinels on one hook reconcile at once: one pass.
	p.cfg.ReconcileEvery, q.cfg.ReconcileEvery = 10*time.Minute, 10*time.Minute
	var wg sync.WaitGroup
	results := make([]providers.ReconcileResult, 4)
	for i, x := range []struct {
		p *Provider
		h int
	}{{p, 0}, {q, 0}, {p, 1}, {q, 1}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			handle := hd
			if x.h == 1 {
				handle = sibling
			}
			res, err := x.p.Reconcile(ctxT(t), handle)
			h.seen(err)
			require.NoError(t, err)
			results[i] = res
		}()
	}
	wg.Wait()
	// g-old failed before GitHub's 3-day horizon: reported unrecoverable,
	// never asked for.
	want := providers.ReconcileResult{Checked: 6, Failed: 2, Redelivered: 1, Unrecoverable: 1}
	for _, r := range results {
		require.Equal(t, want, r)
	}
	require.Equal(t, []githubtest.Redelivery{{Repo: testRepo, HookID: id, DeliveryID: failed}}, h.gh.Redeliveries())
	require.Equal(t, 1, h.gh.Count(http.MethodGet, fmt.Sprintf("/repos/acme/widgets/hooks/%d/deliveries", id)))

	// A later pass sees the successful redelivery and asks nothing.
	h.gh.Advance(11 * time.Minute)
	res, err := q.Reconcile(ctxT(t), hd)
	require.NoError(t, err)
	require.Equal(t, providers.ReconcileResult{Checked: 7, Failed: 1, Redelivered: 0}, res, "g-old is reported once")
	require.Len(t, h.gh.Redeliveries(), 1)
	require.Contains(t, h.logs.String(), "webhook delivery unrecoverable")
	require.Contains(t, h.logs.String(), "g-old")

	requireTotals(t, p, hd, 1, 1)
	h.gh.Verify(t)
}

// TestReconcileReadsTheHookLogBackToTheHorizon: a hook with 250 failed
// deliveries, the oldest 70 of them past GitHub's 3-day redelivery window.
// Reconciliation reads the log through gh, page by page through GitHub's
// cursor (100 a page, newest first, Link rel="next"), down to the page
// that reaches the window, so every failed delivery inside it is
// redelivered, each exactly once over passes capped at MaxRedeliveries,
// and none outside it. A pass that left nothing to ask for is remembered:
// the next reads one page.
func TestReconcileReadsTheHookLogBackToTheHorizon(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	p.cfg.MaxRedeliveries = 100
	hd := h.create(p, "github:acme/widgets#1")
	id := h.liveHook(testRepo).ID
	old, inWindow := map[int64]bool{}, map[int64]bool{}
	for range 70 {
		old[h.gh.AddDelivery(testRepo, id, githubtest.Delivery{Event: "pull_request", StatusCode: 500})] = true
	}
	h.gh.Advance(github.RedeliveryHorizon)
	for range 180 { // the fake's clock moves a minute a delivery: all within the window
		inWindow[h.gh.AddDelivery(testRepo, id, githubtest.Delivery{Event: "check_suite", StatusCode: 502})] = true
	}
	log := fmt.Sprintf("/repos/acme/widgets/hooks/%d/deliveries", id)
	pass := func() providers.ReconcileResult {
		t.Helper()
		h.gh.Advance(2 * time.Minute)
		res, err := p.Reconcile(ctxT(t), hd)
		require.NoError(t, err)
		return res
	}
	// Two pages: the 180 inside the window, then 20 of the old ones (the
	// page that reaches the window; the rest are never read). 100 asked.
	require.Equal(t, providers.ReconcileResult{Checked: 200, Failed: 200, Redelivered: 100, Unrecoverable: 20}, pass())
	require.Equal(t, 2, h.gh.Count(http.MethodGet, log))
	// Three pages (the 100 redeliveries on top), the other 80 asked; the
	// 20 old ones were reported already.
	require.Equal(t, providers.ReconcileResult{Checked: 300, Failed: 100, Redelivered: 80}, pass())
	require.Equal(t, 5, h.gh.Count(http.MethodGet, log))
	// Settled: one page, down to what the last pass read.
	require.Equal(t, providers.ReconcileResult{Checked: 100}, pass())
	require.Equal(t, 6, h.gh.Count(http.MethodGet, log))

	asked := map[int64]int{}
	for _, r := range h.gh.Redeliveries() {
		require.Equal(t, id, r.HookID)
		require.False(t, old[r.DeliveryID], "delivery %d is past the window", r.DeliveryID)
		asked[r.DeliveryID]++
	}
	require.Len(t, asked, len(inWindow))
	for d := range inWindow {
		require.Equal(t, 1, asked[d], "delivery %d", d)
	}
	cursors := 0
	for _, r := range h.gh.Requests() {
		if r.Method == http.MethodGet && r.Path == log && strings.Contains(r.Query, "cursor=v1_") {
			cursors++
		}
	}
	require.Equal(t, 3, cursors, "every page after a pass's first is read by the cursor GitHub handed out")

	requireTotals(t, p, hd, 180, 20)
	h.gh.Verify(t)
}

// requireTotals checks the hook's status: the redeliveries asked and the
// deliveries reported unrecoverable, over every pass.
func requireTotals(t *testing.T, p *Provider, hd sentinel.Handle, redelivered, unrecoverable int) {
	t.Helper()
	st, err := p.Status(ctxT(t), hd)
	require.NoError(t, err)
	rc := st.Extra["reconcile"].(map[string]any)
	require.Equal(t, redelivered, rc["totalRedelivered"])
	require.Equal(t, unrecoverable, rc["totalUnrecoverable"])
}

func TestReconcileWithoutRecord(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	hd := h.create(p, "github:acme/widgets#1")
	require.NoError(t, p.Cancel(ctxT(t), hd))
	_, err := p.Reconcile(ctxT(t), hd)
	require.ErrorIs(t, err, errRecordMissing)
	res, err := p.Reconcile(ctxT(t), sentinel.Handle{Provider: Slug})
	require.NoError(t, err)
	require.Zero(t, res)
}

// stubRunner is an in-memory GitHub for the reconciliation memory: its
// deliveries list changes only when the test says so, as when GitHub has
// accepted a redelivery but not yet listed it.
type stubRunner struct {
	mu         sync.Mutex
	deliveries []github.HookDelivery
	attempts   []string
	failPost   bool
}

func (s *stubRunner) API(_ context.Context, method, path string, _ []byte) (int, http.Header, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case method == http.MethodGet && strings.Contains(path, "/deliveries?"):
		b, _ := json.Marshal(s.deliveries)
		return 200, http.Header{}, b, nil
	case method == http.MethodPost && strings.HasSuffix(path, "/attempts"):
		s.attempts = append(s.attempts, path)
		if s.failPost {
			return 502, http.Header{}, nil, &providers.Error{Reason: providers.ReasonServer, Message: "HTTP 502"}
		}
		return 202, http.Header{}, []byte(`{}`), nil
	}
	return 404, http.Header{}, nil, &providers.Error{Reason: providers.ReasonNotFound, Message: "HTTP 404"}
}

func TestReconcileMemory(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	stub := &stubRunner{}
	kv := newMemKV()
	p, err := New(Config{Runner: stub, Store: kv, Locker: memLocker{}, PublicURL: func() providers.PublicURL { return providers.PublicURL{} }, Now: clock})
	require.NoError(t, err)
	rec := &hookRecord{Key: "0123456789abcdef0123456789abcdef", Repo: "o/r", HookID: 9, Secret: newSecret(), Holders: []string{"wh_1"}}
	_, err = p.store().save(context.Background(), rec, 0)
	require.NoError(t, err)
	hd := handleFor(rec, "wh_1")
	at := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	stub.deliveries = []github.HookDelivery{
		{ID: 1, GUID: "a", DeliveredAt: at(time.Hour), Status: "Invalid HTTP Response: 500", StatusCode: 500, Event: "pull_request"},
		{ID: 2, GUID: "b", DeliveredAt: at(time.Hour), Status: "timed out", StatusCode: 0, Event: "pull_request"},
		{ID: 3, GUID: "c", DeliveredAt: at(71 * time.Hour), Status: "OK", StatusCode: 200, Event: "pull_request"},
		{ID: 4, GUID: "d", DeliveredAt: at(time.Hour), Status: "Found", StatusCode: 302, Event: "pull_request"},
	}
	pass := func() providers.ReconcileResult {
		now = now.Add(2 * time.Minute)
		res, err := p.Reconcile(context.Background(), hd)
		require.NoError(t, err)
		return res
	}
	require.Equal(t, providers.ReconcileResult{Checked: 4, Failed: 3, Redelivered: 3}, pass())
	require.Len(t, stub.attempts, 3)

	// GitHub accepted them but has not listed the redeliveries yet: no
	// second request.
	require.Equal(t, providers.ReconcileResult{Checked: 4, Failed: 3, Redelivered: 0}, pass())
	require.Len(t, stub.attempts, 3)

	// The redelivery of "a" failed too: asked again, up to github.MaxRedeliveryAttempts.
	for i := int64(0); i < github.MaxRedeliveryAttempts+1; i++ {
		stub.deliveries = append(stub.deliveries, github.HookDelivery{ID: 10 + i, GUID: "a", DeliveredAt: at(time.Minute - time.Duration(i)*time.Second), StatusCode: 500, Event: "pull_request"})
		pass()
	}
	asks := 0
	for _, a := range stub.attempts {
		if !strings.Contains(a, "/deliveries/2/") && !strings.Contains(a, "/deliveries/4/") {
			asks++
		}
	}
	require.Equal(t, github.MaxRedeliveryAttempts, asks, "one guid is retried at most %d times", github.MaxRedeliveryAttempts)
	got, _, err := p.store().load(context.Background(), "o/r")
	require.NoError(t, err)
	require.Contains(t, got.Reconcile.Lost, "a", "a guid failing on every redelivery is reported unrecoverable")
	require.Equal(t, 1, got.Reconcile.TotalUnrecoverable)

	// A refused request is retried on a later pass.
	stub.deliveries = []github.HookDelivery{{ID: 50, GUID: "e", DeliveredAt: at(time.Minute), StatusCode: 500, Event: "workflow_run"}}
	stub.failPost = true
	now = now.Add(2 * time.Minute)
	_, err = p.Reconcile(context.Background(), hd)
	require.Error(t, err)
	stub.failPost = false
	require.Equal(t, 1, pass().Redelivered)

	// Entries older than the horizon are forgotten.
	now = now.Add(github.RedeliveryHorizon + time.Hour)
	stub.deliveries = nil
	pass()
	got, _, err = p.store().load(context.Background(), "o/r")
	require.NoError(t, err)
	require.Empty(t, got.Reconcile.Asked)
}

package githubapp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestReconcileRedeliversFailedAppDeliveries(t *testing.T) {
	h := newHarness(t)
	a, b := h.provider(), h.provider() // two nodes over one store
	ctx := ctxT(t)

	failed := h.gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-a", Event: "pull_request", StatusCode: http.StatusBadGateway})
	h.gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-b", Event: "check_run"})
	h.gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-c", Event: "status", StatusCode: http.StatusServiceUnavailable})
	h.gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-c", Event: "status"}) // redelivered fine since
	h.gh.AddAppDelivery(githubtest.Delivery{Event: "ping", StatusCode: http.StatusNotFound})

	res, err := a.Reconcile(ctx, hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 5, res.Checked)
	require.Equal(t, 1, res.Failed)
	require.Equal(t, 1, res.Redelivered)
	require.Equal(t, []int64{failed}, h.gh.AppRedeliveries())

	// The other node, within ReconcileEvery: the last pass's counts, no call.
	calls := h.gh.Count("", "/app/hook/deliveries")
	res, err = b.Reconcile(ctx, hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 1, res.Redelivered)
	require.Equal(t, calls, h.gh.Count("", "/app/hook/deliveries"))

	// Later: the same failed delivery is not asked for twice.
	h.gh.Advance(2 * time.Minute)
	res, err = b.Reconcile(ctx, hdEmpty())
	require.NoError(t, err)
	require.Zero(t, res.Redelivered)
	require.Len(t, h.gh.AppRedeliveries(), 1)
}

func TestReconcileReportsDeliveriesPastTheHorizon(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	h.gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-old", Event: "pull_request", StatusCode: http.StatusInternalServerError})
	h.gh.Advance(73 * time.Hour)
	res, err := p.Reconcile(ctxT(t), hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 1, res.Unrecoverable)
	require.Empty(t, h.gh.AppRedeliveries())
}

// TestReconcilePagesBackThroughTheCursor: the App's delivery log is
// read page by page through GitHub's cursor (the fake serves at most 100 a
// page, newest first, Link rel="next" with a cursor), so failures below
// the first page are redelivered. A pass that left nothing to ask for is
// remembered: the next one reads only the page above it.
func TestReconcilePagesBackThroughTheCursor(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)
	var failed []int64
	for i := range 250 {
		d := githubtest.Delivery{Event: "pull_request"}
		if i < 3 { // the oldest: on the third page
			d.StatusCode = http.StatusBadGateway
		}
		id := h.gh.AddAppDelivery(d)
		if i < 3 {
			failed = append(failed, id)
		}
	}
	res, err := p.Reconcile(ctx, hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 250, res.Checked)
	require.Equal(t, 3, res.Redelivered)
	require.Equal(t, failed, h.gh.AppRedeliveries())
	require.Equal(t, 3, h.gh.Count(http.MethodGet, "/app/hook/deliveries"), "three pages of 100")

	// The next pass: one page, down to what the last pass read.
	h.gh.AddAppDelivery(githubtest.Delivery{Event: "check_run", StatusCode: http.StatusServiceUnavailable})
	h.gh.Advance(2 * time.Minute)
	res, err = p.Reconcile(ctx, hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 1, res.Redelivered)
	require.Equal(t, 4, h.gh.Count(http.MethodGet, "/app/hook/deliveries"))
}

// TestReconcileStopsPagingAtTheHorizon: the read stops at the page that
// reaches deliveries GitHub would no longer redeliver (3 days); the failed
// ones on it are reported unrecoverable.
func TestReconcileStopsPagingAtTheHorizon(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	for range 300 {
		h.gh.AddAppDelivery(githubtest.Delivery{Event: "status", StatusCode: http.StatusInternalServerError})
	}
	h.gh.Advance(73 * time.Hour)
	for range 150 {
		h.gh.AddAppDelivery(githubtest.Delivery{Event: "pull_request"})
	}
	res, err := p.Reconcile(ctxT(t), hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 2, h.gh.Count(http.MethodGet, "/app/hook/deliveries"), "the second page reaches past the horizon")
	require.Equal(t, 200, res.Checked)
	require.Equal(t, 50, res.Unrecoverable)
	require.Empty(t, h.gh.AppRedeliveries())
}

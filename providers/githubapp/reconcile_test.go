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

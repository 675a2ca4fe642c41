package github

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFailedDeliveries: per guid with no successful delivery, its latest
// failed one, within the horizon to redeliver, past it expired; entries
// with no guid or an unreadable time are skipped, and a 2xx whose status
// is not OK is a failure.
func TestFailedDeliveries(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	list := []HookDelivery{
		{ID: 5, GUID: "x", DeliveredAt: at(time.Hour), StatusCode: 500},
		{ID: 7, GUID: "x", DeliveredAt: at(time.Minute), StatusCode: 500, Redelivery: true},
		{ID: 6, GUID: "y", DeliveredAt: at(time.Hour), StatusCode: 500},
		{ID: 8, GUID: "y", DeliveredAt: at(time.Minute), StatusCode: 200, Status: "OK", Redelivery: true},
		{ID: 9, GUID: "z", DeliveredAt: at(RedeliveryHorizon), StatusCode: 500},
		{ID: 10, GUID: "", DeliveredAt: at(time.Minute), StatusCode: 500},
		{ID: 11, GUID: "w", DeliveredAt: "yesterday", StatusCode: 500},
		{ID: 12, GUID: "v", DeliveredAt: at(time.Minute), StatusCode: 200, Status: "Invalid HTTP Response: 200"},
	}
	got, expired := FailedDeliveries(list, now)
	ids := func(ds []HookDelivery) []int64 {
		var out []int64
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	require.Equal(t, []int64{7, 12}, ids(got))
	require.Equal(t, []int64{9}, ids(expired), "past the horizon: unrecoverable")
}

package metrics

import "testing"

func TestDeliveryBacklogCountsDeliveriesWithEventsBehindThem(t *testing.T) {
	m := New()
	m.ObserveDelivery(0)
	m.ObserveDelivery(3)
	m.ObserveDelivery(1)
	got := m.DeliveryBacklog()
	if got != (DeliveryBacklog{Received: 3, Backlogged: 2}) {
		t.Fatalf("backlog = %+v, want 3 received, 2 with events behind them", got)
	}
	var none *Metrics
	none.ObserveDelivery(1)
	if got := none.DeliveryBacklog(); got != (DeliveryBacklog{}) {
		t.Fatalf("a nil Metrics read %+v", got)
	}
}

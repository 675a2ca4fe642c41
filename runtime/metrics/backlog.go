package metrics

import "github.com/prometheus/client_golang/prometheus"

// The delivery counters' names.
const (
	deliveriesReceived   = "sentinel_deliveries_received_total"
	deliveriesBacklogged = "sentinel_deliveries_backlogged_total"
)

// deliveryBacklog counts the deliveries the workers receive and those with
// another event of their partition already waiting behind them: the share
// a partition batch could have taken together (issue 28, lever 1).
type deliveryBacklog struct {
	received   prometheus.Counter
	backlogged prometheus.Counter
}

func newDeliveryBacklog() deliveryBacklog {
	return deliveryBacklog{
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: deliveriesReceived,
			Help: "Deliveries the workers received from their partitions (first deliveries and redeliveries)."}),
		backlogged: prometheus.NewCounter(prometheus.CounterOpts{Name: deliveriesBacklogged,
			Help: "Deliveries received with another event of their partition already waiting behind them."}),
	}
}

func (b deliveryBacklog) register(f func(prometheus.Collector)) {
	f(b.received)
	f(b.backlogged)
}

// ObserveDelivery counts one received delivery; pendingBehind is the
// number of its partition's events waiting behind it. Nil-safe.
func (m *Metrics) ObserveDelivery(pendingBehind uint64) {
	if m == nil {
		return
	}
	m.backlog.received.Inc()
	if pendingBehind > 0 {
		m.backlog.backlogged.Inc()
	}
}

// DeliveryBacklog is the deliveries received so far and how many of them
// had another event of their partition waiting behind them (a nil m reads
// zeros).
type DeliveryBacklog struct {
	Received, Backlogged uint64
}

// DeliveryBacklog reads the delivery counters.
func (m *Metrics) DeliveryBacklog() DeliveryBacklog {
	var out DeliveryBacklog
	if m == nil {
		return out
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			switch f.GetName() {
			case deliveriesReceived:
				out.Received = uint64(s.GetCounter().GetValue())
			case deliveriesBacklogged:
				out.Backlogged = uint64(s.GetCounter().GetValue())
			}
		}
	}
	return out
}

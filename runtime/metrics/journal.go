package metrics

import "github.com/prometheus/client_golang/prometheus"

// JournalDropReasons are the reason label values of
// sentinel_journal_dropped_total (runtime/journal's drop reasons).
var JournalDropReasons = []string{"overflow", "publish_error", "closed"}

func (m *Metrics) initJournal() {
	m.JournalDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sentinel_journal_dropped_total",
		Help: "Decision-journal entries dropped, by reason: overflow (the write queue was full), publish_error, closed (recorded after stop)."}, []string{"reason"})
	for _, r := range JournalDropReasons {
		m.JournalDropped.WithLabelValues(r)
	}
}

// JournalDrop counts one dropped journal entry; nil-safe.
func (m *Metrics) JournalDrop(reason string) {
	if m == nil {
		return
	}
	m.JournalDropped.WithLabelValues(reason).Inc()
}

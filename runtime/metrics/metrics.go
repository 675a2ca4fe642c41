// Package metrics defines the Prometheus metrics of a node on its own
// registry. Every method is nil-safe so components run without metrics in
// tests.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Known label values, created at zero by New so a scrape shows every
// series before its first increment.
var (
	// Origins are the origin label values of the event counters.
	Origins = []string{"poll", "push"}
	// ParkReasons are the reason label values of sentinel_parked_total.
	ParkReasons = []string{"malformed", "post_mortem", "dead_target", "undecodable", "undeliverable"}
)

// Metrics holds the node's collectors.
type Metrics struct {
	Registry *prometheus.Registry

	EventsPublished *prometheus.CounterVec
	EventsDuplicate *prometheus.CounterVec
	Delivered       prometheus.Counter
	Filtered        prometheus.Counter
	SeenDuplicates  prometheus.Counter
	InboxDuplicates prometheus.Counter
	Parked          *prometheus.CounterVec
	DeliveryRetries prometheus.Counter
	Expired         prometheus.Counter
	PollDuration    *prometheus.HistogramVec
	PollErrors      *prometheus.CounterVec
	InboundRequests *prometheus.CounterVec
	InboxMessages   prometheus.Counter
	FollowDigests   prometheus.Counter
	// JournalDropped counts decision-journal entries dropped (journal.go).
	JournalDropped  *prometheus.CounterVec
	githubQuota     *prometheus.GaugeVec
	consumerPending *prometheus.GaugeVec
	inboxDepth      prometheus.Gauge
	cluster         clusterGauges
	storage         storageGauges
	steps           stepHistograms
	backlog         deliveryBacklog
}

// New creates the metrics on a fresh registry (with Go and process
// collectors).
func New() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) { r.MustRegister(c) }
	m := &Metrics{Registry: r}
	m.EventsPublished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sentinel_events_published_total", Help: "Events published into the events stream, by origin (poll, push)."}, []string{"origin"})
	m.EventsDuplicate = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sentinel_events_duplicate_total", Help: "Events the stream dropped as duplicates (Nats-Msg-Id), by origin."}, []string{"origin"})
	m.Delivered = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_events_delivered_total", Help: "Events delivered into an inbox."})
	m.Filtered = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_events_filtered_total", Help: "Events that matched no clause (marked seen, not delivered)."})
	m.SeenDuplicates = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_events_seen_duplicate_total", Help: "Events dropped because their id was in the seen window."})
	m.InboxDuplicates = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_inbox_duplicates_total", Help: "Inbox messages refused because the inbox already held them."})
	m.Parked = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sentinel_parked_total", Help: "Items parked, by reason class."}, []string{"reason"})
	m.DeliveryRetries = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_delivery_retries_total", Help: "Deliveries that failed and were scheduled for retry."})
	m.Expired = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_expired_total", Help: "Sentinels expired by their until condition."})
	m.PollDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sentinel_poll_duration_seconds", Help: "Duration of one provider poll, by provider.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"provider"})
	m.PollErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sentinel_poll_errors_total", Help: "Poll errors, by provider."}, []string{"provider"})
	m.InboundRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sentinel_inbound_requests_total", Help: "Push ingress requests, by HTTP status."}, []string{"status"})
	m.InboxMessages = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_inbox_messages_total", Help: "Messages stored in inboxes."})
	m.FollowDigests = prometheus.NewCounter(prometheus.CounterOpts{Name: "sentinel_follow_digests_total", Help: "Session-follow digests delivered."})
	m.githubQuota = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sentinel_github_quota_remaining", Help: "Last known GitHub rate-limit remaining, by credential (a non-secret id) and resource, as the cluster's quota governor knows it."}, []string{"credential", "resource"})
	m.consumerPending = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sentinel_consumer_pending", Help: "Messages pending per partition consumer."}, []string{"partition"})
	m.inboxDepth = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_inbox_depth", Help: "Messages held in the inbox stream."})
	m.cluster = newClusterGauges()
	m.cluster.register(f)
	m.storage = newStorageGauges()
	m.storage.register(f)
	m.initJournal()
	m.steps = newStepHistograms()
	f(m.steps.vec)
	m.backlog = newDeliveryBacklog()
	m.backlog.register(f)
	for _, c := range []prometheus.Collector{m.JournalDropped, m.EventsPublished, m.EventsDuplicate, m.Delivered, m.Filtered, m.SeenDuplicates, m.InboxDuplicates, m.Parked, m.DeliveryRetries, m.Expired, m.PollDuration, m.PollErrors, m.InboundRequests, m.InboxMessages, m.FollowDigests, m.githubQuota, m.consumerPending, m.inboxDepth} {
		f(c)
	}
	for _, o := range Origins {
		m.EventsPublished.WithLabelValues(o)
		m.EventsDuplicate.WithLabelValues(o)
	}
	for _, r := range ParkReasons {
		m.Parked.WithLabelValues(r)
	}
	return m
}

// InitPoller creates the provider-labelled poll series (duration and
// errors) at zero, so they are scraped before the provider's first poll.
func (m *Metrics) InitPoller(provider string) {
	if m != nil {
		m.PollDuration.WithLabelValues(provider)
		m.PollErrors.WithLabelValues(provider)
	}
}

// Inc increments a counter if m and c are set.
func (m *Metrics) Inc(c func(*Metrics) prometheus.Counter) {
	if m != nil {
		c(m).Inc()
	}
}

// IncVec increments a labelled counter if m is set.
func (m *Metrics) IncVec(c func(*Metrics) *prometheus.CounterVec, label string) {
	if m != nil {
		c(m).WithLabelValues(label).Inc()
	}
}

// ObservePoll records one poll's duration.
func (m *Metrics) ObservePoll(provider string, seconds float64) {
	if m != nil {
		m.PollDuration.WithLabelValues(provider).Observe(seconds)
	}
}

// SetGitHubQuota records the last known remaining quota of a credential's
// resource.
func (m *Metrics) SetGitHubQuota(credential, resource string, remaining float64) {
	if m != nil {
		m.githubQuota.WithLabelValues(credential, resource).Set(remaining)
	}
}

// SetConsumerPending records one partition's pending count.
func (m *Metrics) SetConsumerPending(partition string, n float64) {
	if m != nil {
		m.consumerPending.WithLabelValues(partition).Set(n)
	}
}

// SetInboxDepth records the inbox stream's message count.
func (m *Metrics) SetInboxDepth(n float64) {
	if m != nil {
		m.inboxDepth.Set(n)
	}
}

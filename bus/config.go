package bus

import (
	"errors"
	"time"
)

// Config configures the streams and consumers.
type Config struct {
	// Partitions is the number of event partitions, each with one durable
	// consumer (default 16). Changing it on an existing store is refused
	// while the events stream holds undelivered events.
	Partitions int `mapstructure:"partitions"`
	// EventsDuplicates is the Nats-Msg-Id window of the events stream
	// (default 2m). Keep it short: the server re-reads the whole window at
	// every restart; long-term dedup is the seen window's job.
	EventsDuplicates time.Duration `mapstructure:"events_duplicates"`
	// InboxDuplicates is the Nats-Msg-Id window of the inbox stream
	// (default 2m). Inbox idempotency beyond it comes from one subject per
	// message published with an expected last subject sequence of 0.
	InboxDuplicates time.Duration `mapstructure:"inbox_duplicates"`
	// InboxMaxAge bounds how long inbox messages are kept (default 30 days).
	InboxMaxAge time.Duration `mapstructure:"inbox_max_age"`
	// ParkedMaxAge bounds how long parked records are kept (default 90 days).
	ParkedMaxAge time.Duration `mapstructure:"parked_max_age"`
	// AckWait is how long JetStream waits for the ack of a delivery before
	// redelivering it (default 10s). A delivery that runs longer reports
	// progress, so this bounds only how long an event in flight when a node
	// died waits before another attempt.
	AckWait time.Duration `mapstructure:"ack_wait"`
	// Replicas of every stream and bucket. 0 (the default) means 1 alone,
	// 3 in a cluster, and up to 3 on an external deployment; the node
	// resolves it before Open.
	Replicas int `mapstructure:"replicas"`
	// MemberTTL is how long a node counts as live after its last heartbeat
	// (default 6s); LeaseTTL how long a work lease lasts after its last
	// renewal (default 10s). They are the ages of the keys of the nodes and
	// leases buckets, kept by the stream leader's clock.
	MemberTTL time.Duration `mapstructure:"member_ttl"`
	LeaseTTL  time.Duration `mapstructure:"lease_ttl"`
	// PublishRetry bounds how long an event publish is retried (with the
	// same message id) while its stream has no leader (default 10s: a raft
	// election takes seconds). Past it, push ingress answers 503 if the
	// node is cut off, else 500.
	PublishRetry time.Duration `mapstructure:"publish_retry"`
	// Shared is set by the node (not configured) when other nodes may
	// share its JetStream: an embedded cluster or external mode. Open then
	// refuses settings that differ from the pinned ones (settings.go).
	Shared bool `mapstructure:"-"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Partitions:       16,
		EventsDuplicates: 2 * time.Minute,
		InboxDuplicates:  2 * time.Minute,
		InboxMaxAge:      30 * 24 * time.Hour,
		ParkedMaxAge:     90 * 24 * time.Hour,
		AckWait:          10 * time.Second,
		Replicas:         0,
		MemberTTL:        6 * time.Second,
		LeaseTTL:         10 * time.Second,
		PublishRetry:     10 * time.Second,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	switch {
	case c.Partitions < 1 || c.Partitions > 1024:
		return errors.New("bus: partitions must be within 1..1024")
	case c.EventsDuplicates < time.Second || c.EventsDuplicates > time.Hour:
		return errors.New("bus: events_duplicates must be within 1s..1h")
	case c.InboxDuplicates < time.Second || c.InboxDuplicates > time.Hour:
		return errors.New("bus: inbox_duplicates must be within 1s..1h")
	case c.AckWait < time.Second:
		return errors.New("bus: ack_wait must be at least 1s")
	case c.MemberTTL < time.Second || c.LeaseTTL < time.Second:
		return errors.New("bus: member_ttl and lease_ttl must be at least 1s")
	case c.Replicas < 0 || c.Replicas > 5:
		return errors.New("bus: replicas must be within 1..5 (0: automatic)")
	}
	return nil
}

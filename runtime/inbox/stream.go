package inbox

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/metrics"
)

// The inbox stream is this package's: it declares the config and the
// subjects, and bus only provisions it. It holds AIP-46 session inbox
// messages, one subject per message (sentinel.inbox.<session>.<msgId>).
const StreamName = "SENTINEL_INBOX"

const subjectPrefix = "sentinel.inbox."

// Subject is the subject of one inbox message. One subject per message
// lets the stream refuse a second copy forever (expected last subject
// sequence 0), not only inside the duplicates window.
func Subject(sessionID, msgID string) string {
	return subjectPrefix + sessionID + "." + msgID
}

// Filter matches every message of a session's inbox.
func Filter(sessionID string) string { return subjectPrefix + sessionID + ".*" }

// AllSubjects matches every inbox message.
const AllSubjects = subjectPrefix + "*.*"

// Stream is the inbox stream's spec: duplicates is its Nats-Msg-Id window
// (bus.inbox_duplicates), maxAge how long a message is kept
// (bus.inbox_max_age). Replicas are the bus's.
func Stream(duplicates, maxAge time.Duration) bus.StreamSpec {
	return bus.StreamSpec{Config: jetstream.StreamConfig{
		Name:        StreamName,
		Description: "AIP-46 session inbox messages, one subject per message",
		Subjects:    []string{AllSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  duplicates,
		MaxAge:      maxAge,
		AllowDirect: true,
	}}
}

// Assets are the inbox's stream, for bus.Open, with the bus's settings.
func Assets(c bus.Config) bus.Assets {
	return bus.Assets{Streams: []bus.StreamSpec{Stream(c.InboxDuplicates, c.InboxMaxAge)}}
}

// Bus is what the inbox needs of the bus (*bus.Bus is one).
type Bus interface {
	EnsureStream(ctx context.Context, spec bus.StreamSpec) (jetstream.Stream, error)
	PublishOnce(ctx context.Context, s jetstream.Stream, subj string, data []byte, msgID string) (seq uint64, dup bool, err error)
	OnPublish(subject string, fn func()) (func(), error)
}

// Option sets one of the inbox's optional settings.
type Option func(*Inbox)

// WithMetrics counts the stored messages on m.
func WithMetrics(m *metrics.Metrics) Option { return func(i *Inbox) { i.metrics = m } }

// Open provisions the inbox stream with the bus's settings c (answered
// without a request when bus.Open provisioned it) and returns the inbox
// with opts applied.
func Open(ctx context.Context, b Bus, c bus.Config, opts ...Option) (*Inbox, error) {
	s, err := b.EnsureStream(ctx, Stream(c.InboxDuplicates, c.InboxMaxAge))
	if err != nil {
		return nil, err
	}
	i := &Inbox{b: b, s: s}
	for _, o := range opts {
		o(i)
	}
	return i, nil
}

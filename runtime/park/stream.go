package park

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// The parked stream is this package's: it declares the config and the
// subjects, and bus only provisions it. It holds undeliverable events and
// digests, one subject per sentinel or follow id (sentinel.parked.<id>).
const StreamName = "SENTINEL_PARKED"

const subjectPrefix = "sentinel.parked."

// Subject is the parked-record subject of a sentinel or follow id.
func Subject(id string) string { return subjectPrefix + id }

// AllSubjects matches every parked record.
const AllSubjects = subjectPrefix + "*"

// Stream is the parked stream's spec: maxAge is how long a record is kept
// (bus.parked_max_age). Replicas are the bus's.
func Stream(maxAge time.Duration) bus.StreamSpec {
	return bus.StreamSpec{Config: jetstream.StreamConfig{
		Name:        StreamName,
		Description: "undeliverable events and digests",
		Subjects:    []string{AllSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      maxAge,
		AllowDirect: true,
	}}
}

// Assets are the parked stream, for bus.Open, with the bus's settings.
func Assets(c bus.Config) bus.Assets {
	return bus.Assets{Streams: []bus.StreamSpec{Stream(c.ParkedMaxAge)}}
}

// Bus is what the parked store needs of the bus (*bus.Bus is one).
type Bus interface {
	EnsureStream(ctx context.Context, spec bus.StreamSpec) (jetstream.Stream, error)
	Publish(ctx context.Context, subj string, data []byte, msgID string) (uint64, error)
	MaxPayload() int64
}

// Open provisions the parked stream with the bus's settings c (answered
// without a request when bus.Open provisioned it) and returns the store
// with opts applied.
func Open(ctx context.Context, b Bus, c bus.Config, opts ...Option) (*Store, error) {
	s, err := b.EnsureStream(ctx, Stream(c.ParkedMaxAge))
	if err != nil {
		return nil, err
	}
	st := &Store{b: b, s: s}
	for _, o := range opts {
		o(st)
	}
	if st.now == nil {
		st.now = time.Now
	}
	return st, nil
}

// Option sets one of a store's optional settings.
type Option func(*Store)

// WithClock stamps records with now (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

package sessions

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// The sessions' assets are this package's: it declares their configs and
// subjects, and bus only provisions them. They are the session registry
// and the read cursors buckets, the lifecycle stream the registry's outbox publishes
// to (runtime/follow consumes it) and the hook jobs stream (hookjobs.go).
const (
	// BucketSessions holds the session records, one key per id.
	BucketSessions = "sentinel_sessions"
	// BucketCursors holds the read cursors (inbox.<session>[.<name>]).
	BucketCursors = "sentinel_cursors"
	// StreamLifecycle holds the session lifecycle events, one subject per
	// session.
	StreamLifecycle = "SENTINEL_LIFECYCLE"
)

// LifecycleMaxAge is how long a lifecycle event is kept.
const LifecycleMaxAge = 7 * 24 * time.Hour

const lifecyclePrefix = "sentinel.lifecycle."

// LifecycleSubject is the lifecycle-event subject of a session.
func LifecycleSubject(sessionID string) string { return lifecyclePrefix + sessionID }

// LifecycleAll matches every lifecycle event.
const LifecycleAll = lifecyclePrefix + "*"

// SessionsBucket is the session registry bucket's config.
func SessionsBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketSessions, Description: "session registry", Storage: jetstream.FileStorage}
}

// CursorsBucket is the read cursors bucket's config.
func CursorsBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketCursors, Description: "read cursors", Storage: jetstream.FileStorage}
}

// LifecycleStream is the lifecycle stream's spec: duplicates is its
// Nats-Msg-Id window (bus.inbox_duplicates: an outbox retry within it is
// stored once). Replicas are the bus's.
func LifecycleStream(duplicates time.Duration) bus.StreamSpec {
	return bus.StreamSpec{Config: jetstream.StreamConfig{
		Name:        StreamLifecycle,
		Description: "session lifecycle events",
		Subjects:    []string{LifecycleAll},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      LifecycleMaxAge,
		Duplicates:  duplicates,
	}}
}

// Assets are this package's streams and buckets, for bus.Open, with the
// bus's settings.
func Assets(c bus.Config) bus.Assets {
	return bus.Assets{
		Streams: []bus.StreamSpec{LifecycleStream(c.InboxDuplicates), HookJobsStream()},
		Buckets: []jetstream.KeyValueConfig{SessionsBucket(), CursorsBucket()},
	}
}

// Stores are the provisioned session assets.
type Stores struct {
	Sessions  jetstream.KeyValue
	Cursors   jetstream.KeyValue
	Lifecycle jetstream.Stream
}

// OpenStores provisions the buckets and the lifecycle stream with the
// bus's settings c (answered without a request for those bus.Open
// provisioned) and returns them.
func OpenStores(ctx context.Context, p bus.Provisioner, c bus.Config) (*Stores, error) {
	var st Stores
	var err error
	if st.Sessions, err = p.EnsureKeyValue(ctx, SessionsBucket()); err != nil {
		return nil, err
	}
	if st.Cursors, err = p.EnsureKeyValue(ctx, CursorsBucket()); err != nil {
		return nil, err
	}
	if st.Lifecycle, err = p.EnsureStream(ctx, LifecycleStream(c.InboxDuplicates)); err != nil {
		return nil, err
	}
	return &st, nil
}

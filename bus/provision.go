package bus

import (
	"context"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// Provisioning first reads what exists and writes only what differs: in a
// cluster every node provisions at start, and each update is a replicated
// write through the meta leader even when nothing changes.

func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) (jetstream.Stream, error) {
	var s jetstream.Stream
	err := provision(ctx, func(ctx context.Context) (err error) {
		if s, err = js.Stream(ctx, want.Name); err == nil && sameStream(s.CachedInfo().Config, want) {
			return nil
		}
		s, err = js.CreateOrUpdateStream(ctx, want)
		return err
	})
	return s, err
}

func sameStream(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.Retention == want.Retention &&
		have.Storage == want.Storage && have.Duplicates == want.Duplicates && have.MaxAge == want.MaxAge &&
		have.Replicas == want.Replicas && have.AllowDirect == want.AllowDirect &&
		(want.MaxConsumers == 0 || have.MaxConsumers == want.MaxConsumers) && have.Description == want.Description
}

func ensureKeyValue(ctx context.Context, js jetstream.JetStream, want jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := provision(ctx, func(ctx context.Context) (err error) {
		if kv, err = js.KeyValue(ctx, want.Bucket); err == nil {
			if st, serr := kv.Status(ctx); serr == nil {
				if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && sameBucket(bs.StreamInfo().Config, want) {
					return nil
				}
			}
		}
		kv, err = js.CreateOrUpdateKeyValue(ctx, want)
		return err
	})
	return kv, err
}

func sameBucket(have jetstream.StreamConfig, want jetstream.KeyValueConfig) bool {
	history := int64(want.History)
	if history == 0 {
		history = 1
	}
	return have.MaxAge == want.TTL && have.Replicas == want.Replicas && have.Description == want.Description &&
		have.MaxMsgsPerSubject == history && have.SubjectDeleteMarkerTTL == want.LimitMarkerTTL &&
		have.AllowMsgTTL == (want.LimitMarkerTTL > 0) && have.Storage == want.Storage
}

func ensureConsumer(ctx context.Context, js jetstream.JetStream, stream string, want jetstream.ConsumerConfig) error {
	return provision(ctx, func(ctx context.Context) error {
		if c, err := js.Consumer(ctx, stream, want.Durable); err == nil && sameConsumer(c.CachedInfo().Config, want) {
			return nil
		}
		_, err := js.CreateOrUpdateConsumer(ctx, stream, want)
		return err
	})
}

func sameConsumer(have, want jetstream.ConsumerConfig) bool {
	return have.FilterSubject == want.FilterSubject && have.AckPolicy == want.AckPolicy &&
		have.DeliverPolicy == want.DeliverPolicy && have.MaxAckPending == want.MaxAckPending &&
		have.AckWait == want.AckWait && have.MaxDeliver == want.MaxDeliver && have.Description == want.Description
}

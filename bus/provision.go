package bus

import (
	"context"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
)

// Provisioning first reads what exists and writes only what differs: in a
// cluster every node provisions at start, and each update is a replicated
// write through the meta leader even when nothing changes.

func sameStream(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.Retention == want.Retention &&
		have.Storage == want.Storage && have.Duplicates == want.Duplicates && have.MaxAge == want.MaxAge &&
		have.Replicas == want.Replicas && have.AllowDirect == want.AllowDirect &&
		(want.MaxConsumers == 0 || have.MaxConsumers == want.MaxConsumers) && have.Description == want.Description
}

func ensureKeyValue(ctx context.Context, js jetstream.JetStream, want jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	return provisionAsset(ctx, func(ctx context.Context) (jetstream.KeyValue, assetState, error) {
		kv, err := js.KeyValue(ctx, want.Bucket)
		if err != nil {
			return nil, assetMissing, err
		}
		st, err := kv.Status(ctx)
		if err != nil {
			return nil, assetMissing, err
		}
		bs, ok := st.(*jetstream.KeyValueBucketStatus)
		if !ok {
			return nil, assetMissing, nil
		}
		return kv, stateOf(sameBucket(bs.StreamInfo().Config, want), bs.StreamInfo().Cluster), nil
	}, func(ctx context.Context) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, want)
	})
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

func ensureConsumer(ctx context.Context, js jetstream.JetStream, stream string, want jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	return provisionAsset(ctx, func(ctx context.Context) (jetstream.Consumer, assetState, error) {
		c, err := js.Consumer(ctx, stream, want.Durable)
		if err != nil {
			return nil, assetMissing, err
		}
		return c, stateOf(sameConsumer(c.CachedInfo().Config, want), c.CachedInfo().Cluster), nil
	}, func(ctx context.Context) (jetstream.Consumer, error) {
		return js.CreateOrUpdateConsumer(ctx, stream, want)
	})
}

func sameConsumer(have, want jetstream.ConsumerConfig) bool {
	return have.FilterSubject == want.FilterSubject && have.AckPolicy == want.AckPolicy &&
		have.DeliverPolicy == want.DeliverPolicy && have.MaxAckPending == want.MaxAckPending &&
		have.AckWait == want.AckWait && have.MaxDeliver == want.MaxDeliver && have.Description == want.Description
}

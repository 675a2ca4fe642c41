package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Hook jobs: a session's command hooks run on its home node (where its
// harness lives), whichever node needs them. A node that is not the home
// enqueues a job on the home's subject of the work-queue stream
// SENTINEL_HOOKS; the home node's durable consumer (HookConsumerName) runs
// it and acks after. A job for a node that is down waits in the stream
// until that node comes back (or HookJobsMaxAge passes).

// HookJobsMaxAge bounds how long a hook job waits for its node. A job is
// a wake-up (the messages it is about are in the inbox already), so one
// older than this is not worth running.
const HookJobsMaxAge = 7 * 24 * time.Hour

// HookJobsDuplicates is the Nats-Msg-Id window of the hook jobs stream: a
// job enqueued again within it (a retried hand-over) is stored once.
const HookJobsDuplicates = 2 * time.Minute

// HookJobAckWait is how long a hook job in flight waits for its ack before
// it is delivered again; a node running a longer hook reports progress.
const HookJobAckWait = 30 * time.Second

func hookJobsStreamConfig(c Config) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:         StreamHookJobs,
		Description:  "command hooks to run on a session's home node, one subject per node",
		Subjects:     []string{HookJobsAll},
		Storage:      jetstream.FileStorage,
		Retention:    jetstream.WorkQueuePolicy,
		Duplicates:   HookJobsDuplicates,
		MaxAge:       HookJobsMaxAge,
		Replicas:     c.Replicas,
		MaxConsumers: -1,
	}
}

// openHookJobs provisions the hook jobs stream (Open calls it). The
// per-node consumers are provisioned by their nodes (HookConsumer).
func openHookJobs(ctx context.Context, js jetstream.JetStream, c Config) error {
	sc := hookJobsStreamConfig(c)
	if _, err := ensureStream(ctx, js, sc); err != nil {
		return fmt.Errorf("bus: provision stream %s: %w", sc.Name, err)
	}
	return nil
}

func hookConsumerConfig(node string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       HookConsumerName(node),
		Description:   "the hook jobs of node " + node,
		FilterSubject: HookJobSubject(node),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 256,
		AckWait:       HookJobAckWait,
		MaxDeliver:    -1,
	}
}

// HookConsumer provisions (idempotently) and returns the durable consumer
// of node's hook jobs. It outlives the node: jobs enqueued while the node
// is down wait for it.
func (b *Bus) HookConsumer(ctx context.Context, node string) (jetstream.Consumer, error) {
	want := hookConsumerConfig(node)
	c, err := ensureConsumer(ctx, b.JS, StreamHookJobs, want)
	if err != nil {
		return nil, fmt.Errorf("bus: provision consumer %s: %w", want.Durable, err)
	}
	return c, nil
}

// PublishHookJob enqueues a job for node with Nats-Msg-Id msgID and waits
// for the PubAck; dup reports that the stream dropped it as a duplicate.
func (b *Bus) PublishHookJob(ctx context.Context, node, msgID string, data []byte) (dup bool, err error) {
	ack, err := b.JS.Publish(ctx, HookJobSubject(node), data, jetstream.WithMsgID(msgID))
	if err != nil {
		return false, fmt.Errorf("bus: enqueue a hook job for node %s: %w", node, err)
	}
	return ack.Duplicate, nil
}

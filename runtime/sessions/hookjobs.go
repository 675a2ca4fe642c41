package sessions

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// Hook jobs (the stream is this package's; bus only provisions it): a session's command hooks run on its home node (where its
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

// HookJobsStream is the hook jobs stream's spec, for bus.Open (the
// composition root provisions it with the other streams). Replicas are
// the bus's.
func HookJobsStream() bus.StreamSpec {
	return bus.StreamSpec{Config: jetstream.StreamConfig{
		Name:         StreamHookJobs,
		Description:  "command hooks to run on a session's home node, one subject per node",
		Subjects:     []string{HookJobsAll},
		Storage:      jetstream.FileStorage,
		Retention:    jetstream.WorkQueuePolicy,
		Duplicates:   HookJobsDuplicates,
		MaxAge:       HookJobsMaxAge,
		MaxConsumers: -1,
	}}
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

// hookConsumer provisions (idempotently) and returns the durable consumer
// of node's hook jobs. It outlives the node: jobs enqueued while the node
// is down wait for it.
func hookConsumer(ctx context.Context, b HomesBus, node string) (jetstream.Consumer, error) {
	return b.EnsureConsumer(ctx, StreamHookJobs, hookConsumerConfig(node))
}

// publishHookJob enqueues a job for node with Nats-Msg-Id msgID and waits
// for the PubAck; dup reports that the stream dropped it as a duplicate.
func publishHookJob(ctx context.Context, b HomesBus, node, msgID string, data []byte) (dup bool, err error) {
	_, dup, err = b.PublishDedup(ctx, HookJobSubject(node), data, msgID)
	if err != nil {
		return false, fmt.Errorf("bus: enqueue a hook job for node %s: %w", node, err)
	}
	return dup, nil
}

const (
	StreamHookJobs = "SENTINEL_HOOKS"
	hookJobsPrefix = "sentinel.hooks."
	resumePrefix   = "sentinel.control.resume."
)

// HookJobSubject is the subject of the hook jobs a node runs: the command
// hooks of the sessions that live on it, handed over by other nodes.
func HookJobSubject(node string) string { return hookJobsPrefix + node }

// HookJobsAll matches every node's hook jobs.
const HookJobsAll = hookJobsPrefix + "*"

// HookConsumerName is the durable consumer of one node's hook jobs.
func HookConsumerName(node string) string { return "hooks-" + node }

// HookJobMsgID is the Nats-Msg-Id of a hook job: its kind, the node it is
// for and the key of what triggered it (an inbox message id), so a job
// enqueued twice within the stream's duplicates window is stored once.
func HookJobMsgID(kind, node, key string) string { return kind + ":" + node + ":" + key }

// ResumeSubject is the request subject on which a node runs the resume
// hooks of the sessions that live on it (core NATS request/reply, not a
// stream: the caller needs the answer).
func ResumeSubject(node string) string { return resumePrefix + node }

package deliver

import "github.com/agentproto/sentinel/runtime/pause"

// The pipeline's and the workers' named pause points (runtime/pause), each
// reached with the event id as its key. Tests hold a node at one while
// another node runs (docs/RELIABILITY.md, "Interleavings tested").
const (
	// PointReceived: a worker received a delivery, before the pipeline.
	PointReceived pause.Point = "deliver.received"
	// PointRead: the pipeline read the sentinel's record, before any
	// decision.
	PointRead pause.Point = "deliver.read"
	// PointSettle: the pipeline returned and the in-progress pings
	// stopped, before the worker acks or naks: a node held here past the
	// ack wait is one that paused there.
	PointSettle pause.Point = "deliver.settle"
	// PointSend: the pipeline is about to store the event's message at
	// its target (the direct path's inbox write, a route, a confirm).
	PointSend pause.Point = "deliver.send"
	// PointPing: a worker is about to tell JetStream it still handles the
	// delivery (an in-progress ping, every quarter of the ack wait). Holding
	// it stops the pings, as a paused process would: with a hold inside the
	// pipeline too, the node pauses past the ack wait mid-event.
	PointPing pause.Point = "deliver.ping"
	// PointAbandon: a worker leaves a delivery it no longer owns (its
	// ack wait ran out while it held it, or another handler stored the
	// event meanwhile) unsettled, for the live holder to ack.
	PointAbandon pause.Point = "deliver.abandon"
	// PointDigestSealed: a flush sealed a digest window (key: the window's
	// key, BatchKey), before it stores the digest: a node lost here left a
	// sealed window for another node to complete.
	PointDigestSealed pause.Point = "deliver.digest.sealed"
)

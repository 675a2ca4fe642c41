// Package bus is the generic JetStream facade of sentinel: the connection
// and the bus's own assets (the partitioned events stream and its
// consumers, the setup bucket of the settings every node agrees on, the
// Locker's bucket), idempotent provisioning of the streams and buckets
// features declare (Open, EnsureStream, EnsureKeyValue), publishes with a
// message id and retry, the KV compare-and-set view, leader reads, key
// listings that survive a node cut off from quorum, and core NATS
// wake-ups and request/reply. A feature's stream or bucket config and its
// subjects live in the feature's package (STYLE rule 10), never here. It
// holds no domain logic and imports nats.go only (never nats-server,
// never the runtime).
package bus

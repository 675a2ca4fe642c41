// Package bus is the generic JetStream facade of sentinel: the connection
// and the bus's own assets (the partitioned events stream and its
// consumers, the setup bucket of the settings every node agrees on, the
// Locker's bucket), idempotent provisioning of the streams and buckets
// features declare (Open, EnsureStream, EnsureKeyValue), publishes with a
// message id and retry, the KV compare-and-set view, leader reads, key
// listings that survive a node cut off from quorum, and core NATS
// wake-ups and request/reply. A feature's package declares its stream's
// or bucket's config and subjects; bus only provisions them, and never
// declares a feature's. It holds no domain logic: besides nats.go it
// imports only the module's domain package (never nats-server, never the
// runtime).
package bus

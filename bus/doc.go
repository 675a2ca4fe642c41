// Package bus is the JetStream facade of sentinel: every stream, KV bucket
// and consumer name and configuration lives here, is provisioned
// idempotently at start, and every subject is built by a function of this
// package. It holds no domain logic and imports nats.go only (never
// nats-server, never the runtime).
package bus

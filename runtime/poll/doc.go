// Package poll runs the adaptive poll loop (a self-rescheduling timer: the
// active interval while any pollable sentinel delivered an event within the
// hot window, the idle interval otherwise; a tick is skipped while one is in
// flight) and publishes polled and pushed events into the events stream:
// every event is published and its PubAck awaited before the provider's
// cursor is persisted and acked. The provider cancels recorded as
// tombstones run on the loop's own cancel worker (cancels.go), never inside
// a tick.
//
// It imports the domain, providers (contract), bus and the runtime stores;
// never ingress, never a concrete provider.
package poll

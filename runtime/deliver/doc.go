// Package deliver runs the per-event pipeline over the events stream: one
// durable pull consumer per partition with one message in flight (order per
// sentinel), each message handled exactly as the spec orders it (gone or
// not pollable, until.at, seen, closedSubjects and post-mortem parking,
// match, deliver, mark seen and counters, until) and acked only after it is
// handled. A failed delivery is Nak'ed with a bounded backoff.
//
// It imports the domain, providers (contract), bus and the runtime stores;
// never ingress, never a concrete provider.
package deliver

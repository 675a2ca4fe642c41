// Package agentpush is the hosted sentinel provider: a thin client of the
// agentpush subscription API. Watching is one durable subscription per
// sentinel whose consumer ref is agentproto:sentinel:<id>; agentpush queues
// matching events server-side so they survive daemon downtime.
//
// Delivery is poll by default (GET .../events?after=<seq>, then an ack by
// seq once the runtime has persisted the whole batch) and push when the
// operator opts in with the delivery=push setup field and the daemon has an
// https public URL; pushed requests carry signature v2 (HMAC-SHA256 over
// "<timestamp>.<body>" keyed by the per-sentinel callback secret).
//
// The workspace API key comes from the injected credential source on every
// call and is only ever placed in the Authorization header: never in a
// handle, an error, a log line or a health report.
//
// Imports: the sentinel domain package, providers, and the standard library.
// It must not import the bus, the runtime, the ingress or another provider.
package agentpush

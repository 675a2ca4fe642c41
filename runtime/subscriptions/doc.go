// Package subscriptions is the machinery behind MCP Events (SEP-3415,
// io.modelcontextprotocol/events): the event-type catalogue, subscriptions
// stored in JetStream KV, the feeds they deliver into, the signed cursor
// and the webhook dispatcher.
//
// A subscription is a sentinel in all but name. Subscribing creates a
// sentinel record (provider auto-selection, the events stream, the seen
// window, until) whose target is {"kind":"mcp-events","mode":...}; the
// delivery Router of this package appends what that sentinel's pipeline
// delivers to the subscription's feed (stream SENTINEL_MCP_EVENTS, one
// subject per event), never to a session inbox. Poll reads the feed after
// the cursor, push streams it, webhook POSTs it.
//
// Cursors are feed-stream sequences, signed (HMAC-SHA256) with a key kept
// in the bucket, bound to the principal, the event name and the canonical
// arguments: every node accepts every node's cursors, and a tampered or
// foreign one is invalid_cursor. Nothing that matters is node-local:
// records and key live in JetStream, stream leases expire by time.
//
// It imports bus, runtime/sentinels, runtime/deliver (the Router contract)
// and the root; never ingress.
package subscriptions

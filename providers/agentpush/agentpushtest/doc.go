// Package agentpushtest is a fake agentpush subscription API on loopback
// (httptest) for tests of the agentpush provider and of the runtime. Like
// the real service it is at-least-once: every subscription has a queue of
// rows with increasing seqs; GET .../events?after=<seq> serves the unacked
// rows after the cursor, and only POST .../ack {upToSeq} removes rows, so a
// batch whose ack never arrived is served again on the next poll from the
// older cursor.
//
// Besides the API it offers a bearer-key check (wrong key 401, forced 401
// or 403), status injection (5xx), poison rows that are not envelopes, a
// request log, server-side status changes, and push delivery that POSTs each
// queued envelope to the subscription's callback URL signed with signature
// v2. SignV2 and SignedHeader sign arbitrary bodies with a chosen timestamp.
//
// It implements the wire protocol independently of package agentpush (it
// imports only the sentinel domain package), so a bug in the provider's
// signing or parsing is not mirrored here.
package agentpushtest

// Package cluster owns work ownership between the nodes of one service:
// who is live (heartbeats in the nodes bucket), whether this node can
// write (its last heartbeat was stored), and which node owns each piece
// of work that must happen once (a lease per poll partition and per
// periodic job in the leases bucket).
//
// Everything is built from JetStream primitives: keys that age out (the
// buckets' MaxAge, kept by the stream leader's clock), compare-and-set on
// revisions, and rendezvous hashing over the live members so ownership
// spreads and moves little when a node joins or leaves. There is no
// election or membership protocol of our own.
//
// A lease is valid locally until LeaseTTL minus a margin after the renewal
// was sent, so a node cut off from quorum stops owning before the bucket
// forgets its lease and another node takes it. That bounds overlap to
// pauses (a SIGSTOP mid-poll); owned writes are fenced on top of it (the
// poll cursor is written only over the cursor that was polled).
//
// The operator's view (GET /cluster) reads the same buckets (view.go:
// members, leases) and a lost node's removal deletes its traces there.
package cluster

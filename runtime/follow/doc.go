// Package follow implements session follows (the AIP-60 guide
// "Wake a session when other sessions finish, wait, crash, or open a PR"):
// follow records in KV (fol_ ids, upsert by key), selectors evaluated at
// event time, per-follower batching with collapse, the digest text, and
// delivery of one system/notice/next-turn digest to the follower (resumed
// like a sentinel target, else parked; never dropped).
//
// It imports the domain, bus and the runtime packages it builds on
// (sessions, inbox, park); never ingress.
package follow

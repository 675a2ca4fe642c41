// Package journal is the decision journal: one entry per decision the
// delivery pipeline takes about an event for a sentinel (delivered,
// filtered, duplicate, post-mortem, dead-target, retrying, undeliverable,
// self, stopped, expired, replayed), on the SENTINEL_JOURNAL stream with
// bounded retention (journal.max_age). The events stream is a work queue
// that forgets an event once acked; the journal is its history, read by
// `sentinel explain`, GET /sentinels/{id}/decisions, GET /events/{id} and
// dry runs.
//
// The Writer keeps the journal off the delivery path: a bounded in-memory
// queue drained by one goroutine with asynchronous publishes; entries the
// queue cannot hold are dropped and counted, never waited for. The stream
// is shared by every node of a cluster.
//
// It imports bus and the root package only.
package journal

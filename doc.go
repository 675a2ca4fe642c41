// Package sentinel is the leaf domain of the sentinel service: the
// SentinelSpec (match clauses, until, target), the SentinelEvent CloudEvents
// envelope, the subject grammar and GitHub hierarchy, type globs, matching,
// PR URL sugar, ids, and the persisted Sentinel record with its public View.
//
// It imports the standard library only; every other package may import it.
package sentinel

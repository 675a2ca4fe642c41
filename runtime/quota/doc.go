// Package quota is the cluster-wide GitHub quota governor. Every answer of
// the node's in-process GitHub clients reports its credential's rate limit
// (github.RateSample: limit, remaining, used, reset, resource; a secondary
// limit's Retry-After); the governor keeps one shared view of them in the
// KV bucket sentinel_github_quota (its config is here, BucketConfig; one
// key per credential and resource, the credential named by a non-secret
// id, never the token), merged by compare-and-set and mirrored on every
// node by a watcher.
//
// The poll loop asks Admit before each poll: a poll spends only what is
// left above a reserve kept for interactive calls (watch, setup, poll
// now), paced by the points the credential's answers spend over the time
// to the window's reset so the budget lasts the window instead of running
// dry early; a secondary limit pauses the
// credential on every node for the time GitHub asks, with backoff when it
// comes again; a 304 to a conditional request costs nothing, as on GitHub.
// A window that passed its reset admits again (resume on reset).
//
// It imports bus and root only.
package quota

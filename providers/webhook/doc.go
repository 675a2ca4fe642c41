// Package webhook is the push-only GitHub provider (slug "webhook"): one
// repository hook per repository, created and maintained through the host's
// gh CLI (`gh api`, the hook body with its HMAC secret on stdin), shared by
// every sentinel watching that repository and refcounted by a holders set.
// GitHub delivers to POST /inbound/sentinel-<key>; ParseInbound verifies the
// X-Hub-Signature-256 HMAC over the raw body before parsing anything and
// normalizes the payload (providers/github), asking GitHub through its
// lookup (github.HeadLookup) what a payload does not say: the PR of a
// fork's CI by its head commit, a submitted review's inline comments. The hook is
// subscribed to the events its holders' types need (Needs in the record).
// Because GitHub never redelivers a failed delivery by itself, Reconcile
// asks it to redeliver the hook's recent failures (within GitHub's 3-day
// window; older ones are reported unrecoverable).
//
// Hook records (route key, hook id, secret, origin, holders) live in the
// injected providers.KV and are changed only under a per-repository lock
// from the injected providers.Locker, which holds across nodes. The secret
// never appears in a handle, a view, a log line or an error.
//
// Imports: the sentinel domain package, providers, providers/github and the
// standard library.
package webhook

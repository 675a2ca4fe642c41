// Package principals keeps the node's named API tokens: each a name, a
// scope (admin, agent, read), an optional session prefix, and the SHA-256
// of its secret (never the secret) in the KV bucket sentinel_principals,
// which this package owns (its config and keys are here, not in bus). A
// token is shown once, when it is created; a revoked token's record is
// deleted. Every node keeps a mirror of the bucket (a watcher), so any
// node authenticates any token from memory.
//
// It imports the bus (provisioning and the KV view) and the domain (the
// Principal and its Scope); never a provider, another runtime package or
// ingress.
package principals

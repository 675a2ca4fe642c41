// Package adapter is the node's side of third-party providers: executables
// named sentinel-adapter-<slug> that speak the adapter protocol
// (docs/adapters.md, package kit) on their stdin and stdout.
//
// It owns discovery (<home>/adapters, adapters.paths, PATH; the first of a
// slug wins; built-in slugs are never shadowed), the process of each
// adapter (started on first use, one per node, calls multiplexed by id
// with a timeout each, restarted with backoff after a crash, a hang or a
// protocol violation, stopped on shutdown, its stderr logged through
// redaction), and a providers.Provider over it that trusts nothing the
// adapter returns: every description, handle and event is checked and
// capped before the runtime sees it.
//
// It imports the provider contract, the protocol (kit) and the domain
// package; never the bus, the runtime or the ingress. Credentials come
// from the node's store (providers.CredentialSource) and go to the adapter
// in the params of each call, never in its argv or environment.
package adapter

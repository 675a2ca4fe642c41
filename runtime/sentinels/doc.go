// Package sentinels owns sentinel records and the seen window in JetStream
// KV, and the service behind every surface: create (validation, id minted
// before the provider's create, provider selection), list, view, remove,
// status, adapters and provider setup.
//
// It imports the domain, providers (the contract only, never a concrete
// provider) and bus; never ingress.
package sentinels

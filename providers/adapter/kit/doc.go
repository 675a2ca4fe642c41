// Package kit is the adapter protocol of sentinel (docs/adapters.md) and a
// small framework for writing an adapter in Go: the wire types of every
// method, the bounded line framing both ends use, the error shape, and
// Serve, the loop that answers the node's calls on stdin/stdout.
//
// An adapter is an executable named sentinel-adapter-<slug> that a node
// starts and talks to with JSON-RPC 2.0, one message per line. With this
// package it is one main:
//
//	func main() {
//		os.Exit(kit.Main(kit.Adapter{
//			Describe: kit.Description{Slug: "example", ...},
//			Create:   create,
//			Poll:     poll,
//		}))
//	}
//
// The package is meant to be imported from a separate module (see
// adapters/gitlab). It imports the standard library, the JSON-RPC library
// (github.com/creachadair/jrpc2), the domain package (sentinel.Event) and
// the provider contract's metadata types (providers.Capabilities,
// providers.SetupField); never the bus, the runtime or the node.
package kit

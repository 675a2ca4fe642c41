// Package providers declares the contract every sentinel provider
// implements (capabilities, readiness, default types, setup fields, the
// create/attach/cancel/status lifecycle, and the optional Poller and
// InboundParser capabilities), the classified provider error, and the
// Registry that holds the explicit provider list.
//
// Providers never touch the bus, the runtime or the ingress: they do one
// unit of work per call and return events. Imports: the sentinel domain
// package and the standard library only.
package providers

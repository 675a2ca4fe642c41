// Package app is the composition root of a node: its Config, the explicit
// provider list, and New/Start/Stop/Run wiring the embedded server, the
// bus, the runtime components and the HTTP listener, with a LIFO teardown
// stack run under a shutdown timeout.
//
// It is the only package below cmd that imports both runtime/* and
// ingress/*; it adapts the runtime services to the ingress/api interfaces.
package app

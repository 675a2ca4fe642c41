// Package api is the leaf contract between the surfaces (REST, push
// ingress, MCP, CLI) and the runtime: the service interfaces the handlers
// call, the wire shapes they return, and the one error catalogue mapping
// codes to HTTP statuses and CLI exit codes.
//
// It imports the domain and the providers contract only; runtime/app
// implements its interfaces.
package api

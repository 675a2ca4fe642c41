// Package ingress is the node's one HTTP listener: the chi root, its
// middleware (request id, logging, panic recovery, bearer auth, body
// limits), the mounted sub-routers (REST, push ingress, MCP, health,
// metrics), and graceful shutdown.
package ingress

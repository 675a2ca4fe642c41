// Package ingress is the node's one HTTP listener: the chi root, its
// middleware (node-made request ids, logging, panic recovery, the Host
// and Origin checks, the body read deadline, bearer auth, body limits),
// the mounted sub-routers (REST, push ingress, MCP, health,
// metrics), and graceful shutdown.
package ingress

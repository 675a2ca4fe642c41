// Package mcpevents is the JSON-RPC layer of MCP Events (SEP-3415,
// io.modelcontextprotocol/events) in front of mcp-go, which answers
// unknown methods with Method not found and has no hook for custom ones.
//
// It intercepts requests of protocol revision 2026-07-28 and later (the
// version in params._meta, and over HTTP the Mcp-Protocol-Version header):
// events/list, events/poll, events/stream, events/subscribe and
// events/unsubscribe go to a Dispatcher, and the server/discover result
// gains the extension in capabilities.extensions. Everything else, and
// events/* of earlier revisions (where mcp-go answers Method not found, as
// the SEP says), passes through untouched.
//
// Transports: streamable HTTP (Handler; events/stream answers an SSE
// stream, other methods one JSON body) and stdio (ServeStdio; stream
// notifications are lines on stdout, notifications/cancelled with the
// request's id ends a stream). Dispatchers: Server calls the in-process
// Service (the node); Forwarder relays to a node's /mcp over HTTP (the
// `sentinel mcp` bridge), so both transports share the node's one
// implementation.
//
// It imports the root package only (no mcp-go, no runtime).
package mcpevents

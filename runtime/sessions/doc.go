// Package sessions owns the light AIP-46 session registry the node hosts
// for harnesses: session records in KV (status, end reasons, heartbeat
// lapse, hooks, PR activity), lifecycle events on the lifecycle stream,
// the inbox service (send with a computed sender, reads after a per-session
// read cursor, waits), the resume and notify hook runner, dead-target
// routing of sentinel events (a deliver.Router), and PR auto-link.
//
// It imports the domain, bus and the runtime packages it builds on
// (inbox, park, deliver, sentinels); never ingress and never a concrete
// provider.
package sessions

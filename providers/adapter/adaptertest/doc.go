// Package adaptertest is a scriptable adapter executable for tests (the
// feed adapter, written with package kit) and the helpers that build and
// install it: Build compiles sentinel-adapter-feed once per directory,
// Install links it under another slug (the slug comes from the name it is
// run as), and the <SLUG>_MODE variable turns it hostile (hang, flood,
// garbage, oversized answers, a crash, a wrong handshake, bad events).
//
// The feed adapter reads its events from the file in <SLUG>_FEED, one JSON
// object per line ({"subject","type","id","summary","terminal"}); its
// cursor is the number of lines consumed. It requires the setup field
// token, hands it back nowhere, and writes it to stderr once per poll
// (the node must redact it).
package adaptertest

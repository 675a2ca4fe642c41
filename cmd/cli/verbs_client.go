package cli

// clientVerbs are the client verbs of a running node (watch, list, rm,
// status, poll, adapters, setup, follow, unfollow, follows, session,
// inbox, parked, mcp).
var clientVerbs = []verbBuilder{}

package cli

import "github.com/spf13/cobra"

// clientVerbs are the client verbs of a running node (watch, list, rm,
// status, poll, adapters, setup, follow, unfollow, follows, session,
// inbox, parked, cluster, token, explain, mcp), in help order. Each builder passes a nil runF: the
// command runs its xRun.
var clientVerbs = []verbBuilder{
	func(io IO) *cobra.Command { return NewCmdWatch(io, nil) },
	func(io IO) *cobra.Command { return NewCmdList(io, nil) },
	func(io IO) *cobra.Command { return NewCmdRm(io, nil) },
	func(io IO) *cobra.Command { return NewCmdStatus(io, nil) },
	func(io IO) *cobra.Command { return NewCmdPoll(io, nil) },
	func(io IO) *cobra.Command { return NewCmdAdapters(io, nil) },
	func(io IO) *cobra.Command { return NewCmdSetup(io, nil) },
	func(io IO) *cobra.Command { return NewCmdFollow(io, nil) },
	func(io IO) *cobra.Command { return NewCmdUnfollow(io, nil) },
	func(io IO) *cobra.Command { return NewCmdFollows(io, nil) },
	NewCmdSession,
	func(io IO) *cobra.Command { return NewCmdInbox(io, nil) },
	func(io IO) *cobra.Command { return NewCmdParked(io, nil) },
	func(io IO) *cobra.Command { return NewCmdCluster(io, nil) },
	NewCmdToken,
	func(io IO) *cobra.Command { return NewCmdExplain(io, nil) },
	func(io IO) *cobra.Command { return NewCmdMCP(io, nil) },
}

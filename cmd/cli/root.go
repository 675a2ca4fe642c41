// Package cli holds the cobra command tree of the sentinel binary, the
// viper-based configuration (flags > AGENTPROTO_* environment >
// <home>/config.yaml > defaults), node and token discovery for client
// verbs, and the mapping of errors to exit codes. It is the only package
// that imports cobra and viper.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
)

// IO are the streams a command uses.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StdIO returns the process streams.
func StdIO() IO { return IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// ExitError carries an exit code out of a command.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, io IO) int {
	root := NewRootCmd(io)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return api.ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintln(io.ErrOut, "sentinel:", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintln(io.ErrOut, "sentinel:", err)
	var fe *flagError
	if errors.As(err, &fe) {
		return api.ExitUsage
	}
	return api.ExitError
}

type flagError struct{ err error }

func (e *flagError) Error() string { return e.err.Error() }

// verbBuilder builds one top-level verb.
type verbBuilder func(io IO) *cobra.Command

// verbs lists every top-level verb, in help order: the node's own (serve,
// health), the client verbs of a running node, the agent-harness hooks,
// the tools for adapter authors, and the benchmark and chaos harnesses.
func verbs() []verbBuilder {
	return []verbBuilder{
		newServeCmd, NewCmdHealth,
		NewCmdWatch, NewCmdList, NewCmdRm, NewCmdStatus, NewCmdPoll, NewCmdAdapters, NewCmdSetup,
		NewCmdFollow, NewCmdUnfollow, NewCmdFollows, NewCmdSession, NewCmdInbox, NewCmdParked,
		NewCmdCluster, NewCmdToken, NewCmdExplain, NewCmdMCP,
		newHookCmd, newAdapterCmd, newBenchCmd, newChaosCmd,
	}
}

// NewRootCmd builds the command tree.
func NewRootCmd(io IO) *cobra.Command {
	root := &cobra.Command{
		Use:           "sentinel",
		Short:         "Watch pull requests, repositories and other subjects and deliver events to agent session inboxes",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &flagError{err: fmt.Errorf("%w\n\n%s", err, c.UsageString())}
	})
	root.PersistentFlags().String("home", "", "node home folder (default $AGENTPROTO_HOME, else ~/.agentproto)")
	for _, v := range verbs() {
		root.AddCommand(v(io))
	}
	return root
}

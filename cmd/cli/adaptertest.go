package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/providers/providertest"
	"github.com/agentproto/sentinel/runtime/app"
)

// newAdapterCmd builds `sentinel adapter` (tools for adapter authors).
func newAdapterCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "adapter",
		Short: "Tools for writing third-party adapters (docs/adapters.md)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newAdapterTestCmd(io))
	return cmd
}

// newAdapterTestCmd builds `sentinel adapter test <path|slug>`.
func newAdapterTestCmd(io IO) *cobra.Command {
	var subject string
	var fields []string
	cmd := &cobra.Command{
		Use:   "test <path|slug> --subject <subject>",
		Short: "Run the provider conformance suite against an adapter executable",
		Long: `Start the adapter (a path, or a slug found as a node finds it: <home>/adapters,
adapters.paths, PATH) and run, through the node's own adapter provider, the
checks every built-in provider passes: the handshake, the refusal of an
unknown method, readiness, metadata, create on --subject, a baseline poll,
status and idempotent cancel (the checks that need new upstream events are
skipped: run them from Go with providertest.RunPoller and an Emit). Setup
fields for the run are given with --field (name=value, name=- for stdin, or a
bare name for a prompt); they are kept in memory only. No node is needed.

Prints a table of what holds; exit 0 when every check passes or is skipped,
1 on a failed check, 2 on bad arguments.`,
		Example: `  printf '%s\n' "$GITLAB_TOKEN" | sentinel adapter test ./sentinel-adapter-gitlab --subject 'gitlab:group/project!1' --field token=-`,
		Args:    exactArgs(1, "give the adapter's path or slug"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if subject == "" {
				return usageError("give --subject, a clause subject the adapter accepts")
			}
			cfg, err := LoadConfig(cmd, nil)
			if err != nil {
				return &ExitError{Code: api.ExitUsage, Err: err}
			}
			vals, err := readFields(io, fields, terminalSecret(io))
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(io.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
			rep, err := app.CheckAdapter(cmd.Context(), cfg, app.AdapterCheckRequest{Target: args[0], Subject: subject, Fields: vals}, log)
			if errors.Is(err, app.ErrAdapterNotFound) {
				return usageError("%v", err)
			}
			if err != nil {
				return err
			}
			if jsonFlag(cmd) {
				if err := writeJSON(io.Out, rep); err != nil {
					return err
				}
			} else {
				printAdapterReport(io, rep)
			}
			if rep.Failed() {
				return &ExitError{Code: api.ExitError, Err: fmt.Errorf("%s failed the conformance suite", rep.Slug)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&subject, "subject", "", "a clause subject the adapter accepts (required)")
	cmd.Flags().StringArrayVar(&fields, "field", nil, "setup field for this run: name=value, name=- (stdin) or name (prompt); repeatable")
	cmd.Flags().Bool("json", false, "print the report as JSON")
	return cmd
}

// printAdapterReport prints the table of checks.
func printAdapterReport(io IO, rep app.AdapterCheckReport) {
	fmt.Fprintf(io.Out, "%s (%s)\n", rep.Slug, rep.Path)
	o := &ClientOptions{IO: io}
	w := o.table()
	row(w, "CHECK", "RESULT", "MS", "DETAIL")
	pass, fail, skip := 0, 0, 0
	for _, r := range rep.Results {
		switch r.Outcome {
		case providertest.Pass:
			pass++
		case providertest.Fail:
			fail++
		default:
			skip++
		}
		row(w, r.Name, r.Outcome, strconv.FormatInt(r.Ms, 10), clip(r.Detail, 120))
	}
	_ = w.Flush()
	fmt.Fprintf(io.Out, "%d passed, %d failed, %d skipped\n", pass, fail, skip)
}

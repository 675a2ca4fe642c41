package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// watchDryRun runs `sentinel watch ... --dry-run`: POST
// /sentinels?dryRun=true, then what the watch would have matched.
func watchDryRun(cmd *cobra.Command, opts *WatchOptions, req sentinel.WatchRequest) error {
	var out api.DryRun
	if printed, err := opts.send(sentinelHints, func(c *apiclient.Client) (err error) {
		out, err = apiclient.Sentinels{C: c}.CreateDryRun(cmd.Context(), req)
		return err
	}); err != nil || printed {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "Dry run (nothing created): %s via %s would have matched %d of %d journaled events since %s.\n",
		subjects(out.Spec.Match), out.Provider, out.Matched, out.Scanned, isoTime(out.Since))
	if len(out.Examples) == 0 {
		return nil
	}
	w := opts.table()
	row(w, "EVENT TIME", "EVENT", "TYPE", "SUBJECT", "SUMMARY")
	for _, e := range out.Examples {
		row(w, isoTime(e.Time), e.EventID, e.Type, e.Subject, clip(e.Summary, 60))
	}
	return w.Flush()
}

// onIf renders a switch that is shown only when on.
func onIf(on bool) string {
	if on {
		return "on"
	}
	return ""
}

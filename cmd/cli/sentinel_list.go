package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// listPage is the page size `sentinel list` asks for.
const listPage = 500

// ListOptions are the options of `sentinel list`.
type ListOptions struct {
	ClientOptions
	// Query holds the filters; Query.Limit is --limit (0: every match).
	Query api.SentinelQuery
}

// NewCmdList builds `sentinel list`: it follows the node's pages (GET
// /sentinels?limit=&after=) until the last, or until --limit sentinels.
func NewCmdList(io IO) *cobra.Command {
	opts := &ListOptions{}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the sentinels on the node, oldest first (filters: --status, --provider, --session, --subject)",
		Example: `  sentinel list --status error
  sentinel list --subject github:acme/widgets --json
  sentinel list --limit 20`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			f := cmd.Flags()
			status, _ := f.GetString("status")
			opts.Query.Status = sentinel.Status(status)
			opts.Query.Provider, _ = f.GetString("provider")
			opts.Query.Session, _ = f.GetString("session")
			opts.Query.SubjectPrefix, _ = f.GetString("subject")
			opts.Query.Limit, _ = f.GetInt("limit")
			if opts.Query.Limit < 0 {
				return usageError("--limit must be positive (0 lists every sentinel)")
			}
			if err := (api.SentinelQuery{Status: opts.Query.Status, Session: opts.Query.Session}).Validate(); err != nil {
				return usageError("%v", err)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	addClientFlags(cmd)
	f := cmd.Flags()
	f.Int("limit", 0, "list at most this many sentinels (0: all; the node is read page by page either way)")
	f.String("status", "", "only sentinels with this status: active, paused, expired, orphaned, error")
	f.String("provider", "", "only sentinels of this provider (local-gh, webhook, agentpush)")
	f.String("session", "", "only sentinels delivering to this session")
	f.String("subject", "", "only sentinels with a subject starting with this prefix (github:owner/repo)")
	return cmd
}

// listRun reads page after page and prints the table, or with --json one
// answer {"ok":true,"sentinels":[...]} (with "next" when --limit stopped
// before the end).
func listRun(ctx context.Context, opts *ListOptions) error {
	var all []sentinel.View
	q := opts.Query
	want := q.Limit
	next := ""
	for {
		q.Limit = listPage
		if want > 0 {
			q.Limit = min(listPage, want-len(all))
		}
		var page api.SentinelPage
		if _, err := opts.fetch(sentinelHints, func(c *apiclient.Client) (err error) {
			page, err = apiclient.Sentinels{C: c}.ListPage(ctx, q)
			return err
		}); err != nil {
			return err
		}
		all = append(all, page.Sentinels...)
		next = page.Next
		if next == "" || (want > 0 && len(all) >= want) {
			break
		}
		if page.Next == q.After {
			return &ExitError{Code: api.ExitError, Err: fmt.Errorf("the node answered the same page twice (cursor %s): is the node the same version?", next)}
		}
		q.After = page.Next
	}
	if want > 0 && len(all) > want {
		all = all[:want]
	}
	if opts.JSON {
		out := map[string]any{"ok": true, "sentinels": all}
		if all == nil {
			out["sentinels"] = []sentinel.View{}
		}
		if next != "" {
			out["next"] = next
		}
		opts.printJSON(out)
		return nil
	}
	if len(all) == 0 {
		f := opts.Query
		if f.Status != "" || f.Provider != "" || f.Session != "" || f.SubjectPrefix != "" {
			fmt.Fprintln(opts.IO.Out, "No sentinel matches.")
			return nil
		}
		fmt.Fprintln(opts.IO.Out, "No sentinels. Create one with `sentinel watch pr <url> --session <id>`.")
		return nil
	}
	w := opts.table()
	row(w, "ID", "PROVIDER", "STATUS", "SUBJECT", "UNTIL", "TARGET", "EVENTS", "LAST EVENT", "LAST ERROR")
	for _, v := range all {
		row(w, v.ID, v.Provider, string(v.Status), subjects(v.Match), untilText(v.Until), targetText(v.Target),
			strconv.Itoa(v.EventCount), msTime(v.LastEventTs), clip(v.LastError, 60))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if next != "" {
		fmt.Fprintf(opts.IO.Out, "(more: --limit stopped the listing; raise it or use GET /sentinels?after=%s)\n", next)
	}
	return nil
}

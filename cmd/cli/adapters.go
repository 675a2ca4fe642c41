package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

var adapterHints = hints{
	sentinel.CodeProviderNotFound: "list the providers with `sentinel adapters`",
	sentinel.CodeInvalidSetup:     "see the provider's setup fields with `sentinel adapters`",

	sentinel.CodeSetupCredentialsRequired: "pass the provider's secret fields again with the new URL (e.g. --field apiKey=-)",
	sentinel.CodeSetupEndpointRequired:    "pass the provider's URL field again with the new secret (e.g. --field baseUrl=https://...)",
	sentinel.CodeInsecureURL:              "use an https URL (plain http is allowed only to a loopback host)",
}

// NewCmdAdapters builds `sentinel adapters`.
func NewCmdAdapters(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{use: "adapters", short: "List the sentinel providers: status, capabilities, setup fields", run: adaptersRun})
}

func adaptersRun(cmd *cobra.Command, opts *IDOptions) error {
	var adapters []api.Adapter
	if printed, err := opts.send(adapterHints, func(c *apiclient.Client) (err error) {
		adapters, err = apiclient.Sentinels{C: c}.Adapters(cmd.Context())
		return err
	}); err != nil || printed {
		return err
	}
	if len(adapters) == 0 {
		fmt.Fprintln(opts.IO.Out, "No providers are registered on this node.")
		return nil
	}
	w := opts.table()
	row(w, "SLUG", "STATUS", "VERSION", "MODES", "SETUP FIELDS", "NOTE")
	for _, a := range adapters {
		var modes []string
		if a.Capabilities.Poll {
			modes = append(modes, "poll")
		}
		if a.Capabilities.Push {
			modes = append(modes, "push")
		}
		if a.Capabilities.Durable {
			modes = append(modes, "durable")
		}
		var fields []string
		for _, f := range a.SetupFields {
			n := f.Name
			if f.Required {
				n += "*"
			}
			fields = append(fields, n)
		}
		row(w, a.Slug, a.Status, a.Version, strings.Join(modes, ","), strings.Join(fields, ","), clip(readinessNote(a.Info), 70))
	}
	return w.Flush()
}

// readinessNote extracts info.unavailable (an adapter that cannot be
// used), else info.readiness.reason, prefixed with the
// credential's source (info.credentialSource) when the provider names one.
func readinessNote(info map[string]any) string {
	if u, _ := info["unavailable"].(string); u != "" {
		return u
	}
	r, _ := info["readiness"].(map[string]any)
	s, _ := r["reason"].(string)
	if src, _ := info["credentialSource"].(string); src != "" {
		if s == "" {
			s = "credentials: " + src
		} else {
			s = "credentials: " + src + "; " + s
		}
	}
	if q := quotaNote(info); q != "" {
		if s != "" {
			s += "; "
		}
		s += q
	}
	return s
}

// extraText renders one value of a status's extra for people: the GitHub
// budgets of "quota" as quotaText, another list or object as compact
// JSON (never Go's map syntax), a scalar as it is.
func extraText(key string, v any) string {
	if list, ok := v.([]any); ok && key == "quota" {
		return quotaText(list)
	}
	switch v.(type) {
	case map[string]any, []any:
		if raw, err := json.Marshal(v); err == nil {
			return string(raw)
		}
	}
	return fmt.Sprint(v)
}

// quotaText renders budgets ([{credential,resource,limit,remaining,used,
// reset,pausedUntil?}]) one after another: "token core 4990/5000 left (10
// used), resets <time>[, paused until <time>]".
func quotaText(list []any) string {
	var parts []string
	for _, item := range list {
		b, _ := item.(map[string]any)
		cred, _ := b["credential"].(string)
		if cred == "" {
			continue
		}
		s := cred
		if res, _ := b["resource"].(string); res != "" {
			s += " " + res
		}
		s += fmt.Sprintf(" %v/%v left", b["remaining"], b["limit"])
		if used, ok := b["used"]; ok {
			s += fmt.Sprintf(" (%v used)", used)
		}
		if reset, _ := b["reset"].(string); reset != "" {
			s += ", resets " + reset
		}
		if until, _ := b["pausedUntil"].(string); until != "" {
			s += ", paused until " + until
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// quotaNote summarises info.quota: each GitHub credential's budget as
// "credential remaining/limit" (paused when a secondary limit holds it).
func quotaNote(info map[string]any) string {
	list, _ := info["quota"].([]any)
	var parts []string
	for _, item := range list {
		b, _ := item.(map[string]any)
		cred, _ := b["credential"].(string)
		if cred == "" {
			continue
		}
		note := fmt.Sprintf("quota %s %v/%v", cred, b["remaining"], b["limit"])
		if _, paused := b["pausedUntil"]; paused {
			note += " paused"
		}
		parts = append(parts, note)
	}
	return strings.Join(parts, ", ")
}

// SetupOptions are the options of `sentinel setup`.
type SetupOptions struct {
	ClientOptions
	Slug   string
	Fields []string
	// ReadSecret reads a value without echo (a terminal prompt).
	ReadSecret func(prompt string) (string, error)
}

// NewCmdSetup builds `sentinel setup <slug> --field k=v ...`.
func NewCmdSetup(io IO) *cobra.Command {
	opts := &SetupOptions{}
	cmd := &cobra.Command{
		Use:   "setup <slug> --field name[=value] ...",
		Short: "Configure a provider that declares setup fields (values are never echoed)",
		Long: `Configure a provider. Each --field is name=value, name=- (read the value
from stdin, one line per such field), or a bare name (prompt for it without
echo on a terminal). Prefer - or the prompt for secrets: a value on the
command line is visible to other local users.`,
		Example: `  printf '%s\n' "$AGENTPUSH_KEY" | sentinel setup agentpush --field apiKey=- --field baseUrl=https://agentpush.example`,
		Args:    exactArgs(1, "give the provider slug (see `sentinel adapters`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			opts.Slug = args[0]
			if opts.ReadSecret == nil {
				opts.ReadSecret = terminalSecret(io)
			}
			return setupRun(cmd, opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Fields, "field", nil, "setup field: name=value, name=- (stdin) or name (prompt without echo); repeatable")
	addClientFlags(cmd)
	return cmd
}

func setupRun(cmd *cobra.Command, opts *SetupOptions) error {
	if len(opts.Fields) == 0 {
		return usageError("give at least one --field name=value (see the provider's setup fields with `sentinel adapters`)")
	}
	fields, err := readFields(opts.IO, opts.Fields, opts.ReadSecret)
	if err != nil {
		return err
	}
	var r api.SetupResult
	if printed, err := opts.send(adapterHints, func(c *apiclient.Client) (err error) {
		r, err = apiclient.Sentinels{C: c}.Setup(cmd.Context(), opts.Slug, fields)
		return err
	}); err != nil || printed {
		return err
	}
	ready := "ready"
	if !r.Readiness.Ready {
		ready = "not ready: " + r.Readiness.Reason
	}
	fmt.Fprintf(opts.IO.Out, "Configured %s (stored %s); %s\n", r.Slug, strings.Join(r.Stored, ", "), ready)
	return nil
}

// readFields reads --field values: name=value, name=- (one line of stdin
// per such field) or a bare name (a prompt without echo).
func readFields(streams IO, specs []string, readSecret func(string) (string, error)) (map[string]string, error) {
	fields := map[string]string{}
	stdin := bufio.NewReader(streams.In)
	for _, f := range specs {
		name, value, hasValue := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, usageError("--field %q has no name: use name=value", f)
		}
		switch {
		case hasValue && value == "-":
			line, err := stdin.ReadString('\n')
			if err != nil && (err != io.EOF || line == "") {
				return nil, usageError("--field %s=-: no value on stdin", name)
			}
			value = strings.TrimRight(line, "\r\n")
		case !hasValue:
			v, err := readSecret(name + ": ")
			if err != nil {
				return nil, usageError("--field %s: %v (use %s=- to read it from stdin)", name, err, name)
			}
			value = v
		}
		fields[name] = value
	}
	return fields, nil
}

// terminalSecret prompts on stderr and reads a line without echo from the
// terminal on stdin.
func terminalSecret(io IO) func(string) (string, error) {
	return func(prompt string) (string, error) {
		f, isFile := io.In.(*os.File)
		if !isFile || !term.IsTerminal(int(f.Fd())) {
			return "", fmt.Errorf("stdin is not a terminal, cannot prompt")
		}
		fmt.Fprint(io.ErrOut, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(io.ErrOut)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
}

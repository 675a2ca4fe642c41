package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/runtime/app"
)

// addClientFlags adds the node discovery flags every client verb takes.
func addClientFlags(cmd *cobra.Command) {
	cmd.Flags().String("url", "", "node URL (default $AGENTPROTO_URL, else <home>/daemon.json)")
	cmd.Flags().Bool("json", false, "print JSON")
}

// NewClient finds the node and its token: the URL from --url, then
// AGENTPROTO_URL, then <home>/daemon.json; the token from AGENTPROTO_TOKEN,
// then <home>/daemon-token. Failures name the fix.
func NewClient(cmd *cobra.Command) (*apiclient.Client, error) {
	home := resolveHome(cmd)
	url := ""
	if f := cmd.Flags().Lookup("url"); f != nil {
		url = f.Value.String()
	}
	if url == "" {
		url = os.Getenv("AGENTPROTO_URL")
	}
	if url == "" {
		raw, err := os.ReadFile(filepath.Join(home, app.DaemonFile))
		if err != nil {
			return nil, &ExitError{Code: api.ExitUnavailable, Err: fmt.Errorf("no running node found (no %s): start one with `sentinel serve`, or pass --url / set AGENTPROTO_URL", filepath.Join(home, app.DaemonFile))}
		}
		var info app.DaemonInfo
		if err := json.Unmarshal(raw, &info); err != nil || info.URL == "" {
			return nil, &ExitError{Code: api.ExitUnavailable, Err: fmt.Errorf("%s is corrupt: restart the node with `sentinel serve`", filepath.Join(home, app.DaemonFile))}
		}
		url = info.URL
	}
	token := os.Getenv("AGENTPROTO_TOKEN")
	if token == "" {
		raw, err := os.ReadFile(filepath.Join(home, app.TokenFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, &ExitError{Code: api.ExitAuth, Err: fmt.Errorf("read the token: %w", err)}
		}
		token = strings.TrimSpace(string(raw))
	}
	return apiclient.New(url, token), nil
}

// clientError maps a client error to an exit error that names the fix.
func clientError(err error) error {
	var ae *apiclient.Error
	switch {
	case errors.As(err, &ae):
		msg := ae.Error()
		if ae.Status == 401 {
			msg += " (set AGENTPROTO_TOKEN or check <home>/daemon-token)"
		}
		return &ExitError{Code: api.ExitCode(ae.Status), Err: errors.New(msg)}
	case errors.Is(err, apiclient.ErrUnreachable):
		return &ExitError{Code: api.ExitUnavailable, Err: fmt.Errorf("%w (is `sentinel serve` running?)", err)}
	}
	return &ExitError{Code: api.ExitError, Err: err}
}

// jsonFlag reports whether --json was given.
func jsonFlag(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool("json")
	return v
}

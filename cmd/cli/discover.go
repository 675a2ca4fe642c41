package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
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
	cmd.Flags().String("url", "", urlFlagUsage)
	cmd.Flags().Bool("json", false, "print JSON")
}

// urlFlagUsage is the help of --url on every client verb and `mcp`.
const urlFlagUsage = "node URL, or a comma list of the nodes of one service tried in order (default $AGENTPROTO_URL, else <home>/daemon.json)"

// NewClient finds the nodes and the token: the URLs from --url, then
// AGENTPROTO_URL (each a comma list of node URLs, tried in order), then
// the one URL in <home>/daemon.json; the token from AGENTPROTO_TOKEN, then
// the file AGENTPROTO_TOKEN_FILE names, then <home>/daemon-token. The token
// is never sent over plain http beyond loopback (ErrInsecureURL, unless
// AGENTPROTO_ALLOW_INSECURE_REMOTE=true); https nodes are verified with
// the system's CAs plus AGENTPROTO_TLS_CA's, and the node daemon.json names
// by the certificate it recorded. Failures name the fix.
func NewClient(cmd *cobra.Command) (*apiclient.Client, error) {
	home := resolveHome(cmd)
	var urls []string
	pin := ""
	source, list := "--url", ""
	if f := cmd.Flags().Lookup("url"); f != nil {
		list = f.Value.String()
	}
	if strings.TrimSpace(list) == "" {
		source, list = "AGENTPROTO_URL", os.Getenv("AGENTPROTO_URL")
	}
	if strings.TrimSpace(list) != "" {
		var err error
		if urls, err = parseNodeURLs(source, list); err != nil {
			return nil, &ExitError{Code: api.ExitUsage, Err: err}
		}
	} else {
		raw, err := os.ReadFile(filepath.Join(home, app.DaemonFile))
		if err != nil {
			return nil, &ExitError{Code: api.ExitUnavailable, Err: fmt.Errorf("no running node found (no %s): start one with `sentinel serve`, or pass --url / set AGENTPROTO_URL", filepath.Join(home, app.DaemonFile))}
		}
		var info app.DaemonInfo
		if err := json.Unmarshal(raw, &info); err != nil || info.URL == "" {
			return nil, &ExitError{Code: api.ExitUnavailable, Err: fmt.Errorf("%s is corrupt: restart the node with `sentinel serve`", filepath.Join(home, app.DaemonFile))}
		}
		urls, pin = []string{info.URL}, info.TLSCert
	}
	token, err := envToken()
	if err != nil {
		return nil, &ExitError{Code: api.ExitAuth, Err: err}
	}
	if token == "" {
		raw, err := os.ReadFile(filepath.Join(home, app.TokenFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, &ExitError{Code: api.ExitAuth, Err: fmt.Errorf("read the token: %w", err)}
		}
		token = strings.TrimSpace(string(raw))
	}
	if err := checkTokenTransport(urls, token); err != nil {
		return nil, &ExitError{Code: api.ExitUsage, Err: err}
	}
	tc, err := clientTLS(pin)
	if err != nil {
		return nil, &ExitError{Code: api.ExitUsage, Err: err}
	}
	c := apiclient.NewNodes(urls, token)
	withTLS(c.HTTP, tc)
	return c, nil
}

// parseNodeURLs parses a comma list of node base URLs (source names where
// it came from in errors: --url or AGENTPROTO_URL). Blanks around each
// entry are trimmed, a trailing slash dropped and a repeated URL kept once.
// Each entry must be an http or https URL with a host and without
// credentials, query or fragment; an empty entry ("a,,b") is refused.
// Errors name the entry by position and never echo credentials or a query.
func parseNodeURLs(source, list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for i, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		pos := fmt.Sprintf("%s entry %d", source, i+1)
		if entry == "" {
			return nil, fmt.Errorf("%s is empty: give node URLs separated by commas, e.g. http://10.0.0.1:7717,http://10.0.0.2:7717", pos)
		}
		if !strings.Contains(entry, "://") {
			return nil, fmt.Errorf("%s must start with http:// or https://", pos)
		}
		u, err := url.Parse(entry)
		if err != nil {
			return nil, fmt.Errorf("%s is not a URL: give e.g. http://127.0.0.1:7717", pos)
		}
		if u.User != nil {
			return nil, fmt.Errorf("%s carries credentials (user:password@): remove them and put the API token in AGENTPROTO_TOKEN", pos)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("%s must start with http:// or https:// (got %q)", pos, u.Scheme)
		}
		if u.Host == "" || u.Hostname() == "" {
			return nil, fmt.Errorf("%s has no host: give e.g. http://127.0.0.1:7717", pos)
		}
		if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return nil, fmt.Errorf("%s (%s://%s) must have no query or fragment: give the node's base URL", pos, u.Scheme, u.Host)
		}
		base := strings.TrimRight(entry, "/")
		if !seen[base] {
			seen[base] = true
			out = append(out, base)
		}
	}
	return out, nil
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
	case errors.Is(err, apiclient.ErrOutcomeUnknown):
		return &ExitError{Code: api.ExitOutcomeUnknown, Err: fmt.Errorf("%w: check with `sentinel list` (or `sentinel session list`, `sentinel follows`) whether it was done before repeating it", err)}
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

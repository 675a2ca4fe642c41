package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/app"
)

// HealthOptions are the options of `sentinel health`.
type HealthOptions struct {
	IO  IO
	URL string
	// Path is what to GET (default /readyz; a NATS server's monitor
	// answers /healthz).
	Path    string
	Timeout time.Duration
	JSON    bool
	// HTTP sends the probe (default: a client with no proxy).
	HTTP *http.Client
}

// NewCmdHealth builds `sentinel health`: the container health probe. A
// scratch image has no curl, so the binary probes itself.
func NewCmdHealth(io IO) *cobra.Command {
	opts := &HealthOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Probe the local node's /readyz: exit 0 when ready, 1 when not (a container HEALTHCHECK)",
		Long: `Probe GET /readyz of the local node and exit 0 when it is ready, 1 when it
is not or cannot be reached (Docker counts exit 1 as unhealthy). The node is
--url, else the first of $AGENTPROTO_URL, else <home>/daemon.json (the address
the running node wrote), else the node's own listen address (listen /
AGENTPROTO_LISTEN; an unspecified host such as 0.0.0.0 is probed on loopback).
/readyz needs no token. With --path
it probes another endpoint, healthy on HTTP 200 (a nats-server's monitor:
--url http://127.0.0.1:8222 --path /healthz).`,
		Example: `  HEALTHCHECK CMD ["/sentinel", "health"]
  docker exec node2 /sentinel health --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.JSON = jsonFlag(cmd)
			pin := ""
			if opts.URL == "" {
				u, p, err := localNodeURL(cmd)
				if err != nil {
					return &ExitError{Code: api.ExitError, Err: err}
				}
				opts.URL, pin = u, p
			}
			if opts.HTTP == nil {
				tc, err := clientTLS(pin)
				if err != nil {
					return &ExitError{Code: api.ExitError, Err: err}
				}
				opts.HTTP = &http.Client{Transport: &http.Transport{Proxy: nil, TLSClientConfig: tc}}
			}
			return healthRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.URL, "url", "", "node URL (default: see above)")
	cmd.Flags().StringVar(&opts.Path, "path", "/readyz", "the path to GET; healthy on HTTP 200")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 3*time.Second, "give up after this long")
	cmd.Flags().Bool("json", false, "print the /readyz answer as JSON")
	return cmd
}

// readyAnswer is the body of /readyz (ok is set from the status: 200).
type readyAnswer struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Routes, Peers and WaitingMs come with waiting_for_peers (api.NotReady).
	Routes    *int     `json:"routes,omitempty"`
	Peers     []string `json:"peers,omitempty"`
	WaitingMs int64    `json:"waitingMs,omitempty"`
}

func healthRun(ctx context.Context, opts *HealthOptions) error {
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	hc := opts.HTTP
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{Proxy: nil}}
	}
	if opts.Path == "" {
		opts.Path = "/readyz"
	}
	target := strings.TrimRight(opts.URL, "/") + "/" + strings.TrimLeft(opts.Path, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return &ExitError{Code: api.ExitError, Err: fmt.Errorf("health: bad node URL: %w", err)}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return healthFail(opts, readyAnswer{Error: "unreachable", Message: fmt.Sprintf("no answer from %s: %v", opts.URL, errors.Unwrap(err))})
	}
	defer resp.Body.Close()
	var ans readyAnswer
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &ans) != nil || (ans.Message == "" && resp.StatusCode != http.StatusOK) {
		ans.Message = fmt.Sprintf("%s answered HTTP %d", target, resp.StatusCode)
	}
	ans.OK = resp.StatusCode == http.StatusOK
	if !ans.OK {
		return healthFail(opts, ans)
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, ans)
	}
	fmt.Fprintln(opts.IO.Out, "ready")
	return nil
}

// healthFail prints why the node is not ready and exits 1.
func healthFail(opts *HealthOptions, ans readyAnswer) error {
	if opts.JSON {
		_ = writeJSON(opts.IO.Out, ans)
	}
	why := ans.Message
	if ans.Reason != "" {
		why = ans.Reason + ": " + why
	}
	return &ExitError{Code: api.ExitError, Err: fmt.Errorf("not ready: %s", why)}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// localNodeURL finds the node to probe: AGENTPROTO_URL's first entry,
// else <home>/daemon.json (what the running node wrote: the address it
// really listens on, `serve --listen` included), else the configured
// listen address (https with tls_cert); pin is the node's certificate file
// to pin when the URL is its own (tls_cert, or what daemon.json records).
func localNodeURL(cmd *cobra.Command) (u, pin string, err error) {
	if list := strings.TrimSpace(os.Getenv("AGENTPROTO_URL")); list != "" {
		urls, err := parseNodeURLs("AGENTPROTO_URL", list)
		if err != nil {
			return "", "", err
		}
		return urls[0], "", nil
	}
	home := resolveHome(cmd)
	daemon := filepath.Join(home, app.DaemonFile)
	raw, derr := os.ReadFile(daemon)
	if derr == nil {
		var info app.DaemonInfo
		if err := json.Unmarshal(raw, &info); err != nil || info.URL == "" {
			return "", "", fmt.Errorf("%s is corrupt: pass --url", daemon)
		}
		return info.URL, info.TLSCert, nil
	}
	cfg, err := LoadConfig(cmd, nil)
	if err == nil {
		if host, port, err := net.SplitHostPort(cfg.Listen); err == nil && port != "0" {
			if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
				host = "127.0.0.1"
			}
			if cfg.TLSCert != "" {
				return "https://" + net.JoinHostPort(host, port), cfg.TLSCert, nil
			}
			return "http://" + net.JoinHostPort(host, port), "", nil
		}
	}
	return "", "", fmt.Errorf("no node to probe: pass --url, set AGENTPROTO_URL, or start one with `sentinel serve` (%w)", derr)
}

package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
)

// DefaultHookTimeout bounds one hook run when the hook sets no timeout.
const DefaultHookTimeout = 10 * time.Second

// maxHookOutput caps what a hook may print or answer.
const maxHookOutput = 64 << 10

// HookRunner runs session hooks: a command (argv template, never a shell;
// the payload on stdin) or a URL (the payload POSTed as JSON). Runs are
// bounded by the hook's timeout. A URL hook follows redirects only to the
// same scheme and host (a redirect elsewhere fails the run, so the payload
// never reaches a host the session did not name), and its errors carry the
// URL redacted (sentinel.RedactURL): they end up in logs and notifyError.
type HookRunner struct {
	// http is the client for URL hooks (default: http.DefaultClient's
	// transport without a global timeout; each run has its own deadline).
	// Its CheckRedirect is replaced by the same-host policy.
	http *http.Client
	// timeout is the default timeout (DefaultHookTimeout when zero).
	timeout time.Duration
	// node, when set, is this node's name, given to command hooks in the
	// SENTINEL_NODE environment variable (beside the node's own
	// environment).
	node string
}

// HookRunnerOption sets one of a hook runner's optional settings.
type HookRunnerOption func(*HookRunner)

// WithHookHTTP runs URL hooks with c (its CheckRedirect is replaced by
// the same-host policy).
func WithHookHTTP(c *http.Client) HookRunnerOption { return func(r *HookRunner) { r.http = c } }

// WithHookTimeout is the default timeout of a hook (default
// DefaultHookTimeout).
func WithHookTimeout(d time.Duration) HookRunnerOption { return func(r *HookRunner) { r.timeout = d } }

// WithHookNode gives command hooks this node's name in SENTINEL_NODE.
func WithHookNode(name string) HookRunnerOption { return func(r *HookRunner) { r.node = name } }

// NewHookRunner returns a hook runner with opts applied.
func NewHookRunner(opts ...HookRunnerOption) *HookRunner {
	r := &HookRunner{}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Run runs h with vars substituted into its argv ({name} placeholders) and
// payload on stdin or as the body, and returns its standard output or
// answer body.
func (r *HookRunner) Run(ctx context.Context, h *sentinel.Hook, vars map[string]string, payload []byte) ([]byte, error) {
	if h == nil {
		return nil, errors.New("no hook")
	}
	timeout := r.timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	if h.TimeoutMs > 0 {
		timeout = time.Duration(h.TimeoutMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("hook timed out after %s", timeout))
	defer cancel()
	if h.URL != "" {
		return r.post(ctx, h.URL, payload)
	}
	if len(h.Command) == 0 {
		return nil, errors.New("hook has neither a command nor a URL")
	}
	argv := expand(h.Command, vars)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(payload)
	if r.node != "" {
		cmd.Env = append(os.Environ(), "SENTINEL_NODE="+r.node)
	}
	var out, errOut limitedBuffer
	out.max, errOut.max = maxHookOutput, 4096
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// A hung child that keeps the pipes open must not hold Wait forever.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("hook %s: %w", argv[0], context.Cause(ctx))
	}
	if err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg != "" {
			return nil, fmt.Errorf("hook %s: %w: %s", argv[0], err, msg)
		}
		return nil, fmt.Errorf("hook %s: %w", argv[0], err)
	}
	return out.Bytes(), nil
}

func (r *HookRunner) post(ctx context.Context, rawURL string, payload []byte) ([]byte, error) {
	client := http.Client{}
	if r.http != nil {
		client = *r.http
	}
	client.CheckRedirect = sameHostRedirect
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("hook request: %w", redactURLError(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hook POST %s: %w", sentinel.RedactURL(rawURL), context.Cause(ctx))
		}
		return nil, fmt.Errorf("hook POST: %w", redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHookOutput))
	if err != nil {
		return nil, fmt.Errorf("hook POST %s: read answer: %w", sentinel.RedactURL(rawURL), redactURLError(err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("hook POST %s answered %d", sentinel.RedactURL(rawURL), resp.StatusCode)
	}
	return body, nil
}

// maxHookRedirects bounds the redirects a URL hook follows.
const maxHookRedirects = 10

// sameHostRedirect is the CheckRedirect of URL hooks: a redirect is
// followed only to the scheme and host of the hook's URL.
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxHookRedirects {
		return fmt.Errorf("stopped after %d redirects", maxHookRedirects)
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return fmt.Errorf("refused a redirect from %s://%s to another host (%s://%s)", first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// redactURLError redacts the URL a *url.Error carries (the net/http
// client's errors quote the request URL, query and userinfo included).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = sentinel.RedactURL(ue.URL)
	}
	return err
}

// expand substitutes {name} placeholders in each argument.
func expand(argv []string, vars map[string]string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "{"+k+"}", v)
		}
		out[i] = a
	}
	return out
}

// limitedBuffer keeps the first max bytes written and discards the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"
)

// DefaultHookTimeout bounds one hook run when the hook sets no timeout.
const DefaultHookTimeout = 10 * time.Second

// maxHookOutput caps what a hook may print or answer.
const maxHookOutput = 64 << 10

// HookRunner runs session hooks: a command (argv template, never a shell;
// the payload on stdin) or a URL (the payload POSTed as JSON). Runs are
// bounded by the hook's timeout.
type HookRunner struct {
	// HTTP is the client for URL hooks (default: a client without a
	// global timeout; each run has its own deadline).
	HTTP *http.Client
	// Timeout is the default timeout (DefaultHookTimeout when zero).
	Timeout time.Duration
}

// Run runs h with vars substituted into its argv ({name} placeholders) and
// payload on stdin or as the body, and returns its standard output or
// answer body.
func (r *HookRunner) Run(ctx context.Context, h *Hook, vars map[string]string, payload []byte) ([]byte, error) {
	if h == nil {
		return nil, errors.New("no hook")
	}
	timeout := r.Timeout
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

func (r *HookRunner) post(ctx context.Context, url string, payload []byte) ([]byte, error) {
	client := r.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("hook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("hook POST: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("hook POST: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHookOutput))
	if err != nil {
		return nil, fmt.Errorf("hook POST: read answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("hook POST answered %d", resp.StatusCode)
	}
	return body, nil
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

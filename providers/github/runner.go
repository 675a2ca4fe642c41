package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// Runner defaults.
const (
	DefaultGHPath    = "gh"
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 16 << 20
)

// InstallHint is the fix named when gh is missing.
const InstallHint = "install the GitHub CLI (gh): https://cli.github.com"

// LoginHint is the fix named when gh has no usable credentials.
const LoginHint = "run gh auth login"

// ErrGHNotInstalled is wrapped by every error caused by a missing gh binary.
var ErrGHNotInstalled = errors.New("gh is not installed")

// Config configures a Runner.
type Config struct {
	// Path is the gh binary, a name looked up on PATH or a path (default
	// "gh").
	Path string
	// Env is the complete environment of each gh process; nil inherits
	// os.Environ() at call time.
	Env []string
	// Timeout bounds one gh process (default 30 s) when ctx has no earlier
	// deadline.
	Timeout time.Duration
	// MaxOutput caps stdout and stderr each (default 16 MiB).
	MaxOutput int
}

// Runner runs the host's gh binary. It is safe for concurrent use.
type Runner struct {
	cfg Config
}

// NewRunner returns a Runner with cfg's defaults filled in.
func NewRunner(cfg Config) *Runner {
	if cfg.Path == "" {
		cfg.Path = DefaultGHPath
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	return &Runner{cfg: cfg}
}

// Env returns the environment gh runs with.
func (r *Runner) Env() []string {
	if r.cfg.Env == nil {
		return os.Environ()
	}
	return r.cfg.Env
}

// Getenv returns the value of key in the runner's environment.
func (r *Runner) Getenv(key string) string {
	return lookupEnv(r.Env(), key)
}

// Host returns the GitHub host gh talks to: GH_HOST from the runner's
// environment, else github.com.
func (r *Runner) Host() string {
	if h := strings.TrimSpace(r.Getenv("GH_HOST")); h != "" {
		return h
	}
	return DefaultHost
}

// LookPath resolves the gh binary; the error wraps ErrGHNotInstalled and
// names the fix.
func (r *Runner) LookPath() (string, error) {
	p, err := exec.LookPath(r.cfg.Path)
	if err != nil {
		return "", notInstalled(r.cfg.Path, err)
	}
	return p, nil
}

func notInstalled(path string, cause error) *providers.Error {
	return &providers.Error{
		Reason:  providers.ReasonSetup,
		Message: fmt.Sprintf("gh (the GitHub CLI) was not found as %q: %s", path, InstallHint),
		Err:     errors.Join(ErrGHNotInstalled, cause),
	}
}

// Run runs gh with args, feeding stdin (nil for none) and returning its
// stdout and stderr (stderr redacted of tokens). A missing binary gives a setup error wrapping
// ErrGHNotInstalled; a non-zero exit gives an *ExitError carrying gh's
// trimmed stderr. Secrets must never be passed in args: send them on stdin.
func (r *Runner) Run(ctx context.Context, stdin []byte, args ...string) (stdout, stderr []byte, err error) {
	path, err := r.LookPath()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, r.cfg.Timeout, fmt.Errorf("gh timed out after %s", r.cfg.Timeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = r.Env()
	cmd.WaitDelay = time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut capBuffer
	out.max, errOut.max = r.cfg.MaxOutput, r.cfg.MaxOutput
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	stdout, stderr = out.buf.Bytes(), []byte(redact(errOut.buf.String(), r.Env()))
	if out.over || errOut.over {
		return stdout, stderr, fmt.Errorf("gh %s: output exceeds %d bytes", argSummary(args), r.cfg.MaxOutput)
	}
	if runErr == nil {
		return stdout, stderr, nil
	}
	if cause := context.Cause(ctx); ctx.Err() != nil {
		return stdout, stderr, &providers.Error{Reason: providers.ReasonNetwork, Retryable: true,
			Message: fmt.Sprintf("gh %s: %v", argSummary(args), cause), Err: cause}
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return stdout, stderr, &ExitError{
			Args:   argSummary(args),
			Code:   ee.ExitCode(),
			Stderr: strings.TrimSpace(string(stderr)),
		}
	}
	if errors.Is(runErr, exec.ErrNotFound) || errors.Is(runErr, os.ErrNotExist) {
		return stdout, stderr, notInstalled(r.cfg.Path, runErr)
	}
	return stdout, stderr, fmt.Errorf("gh %s: %w", argSummary(args), runErr)
}

// ExitError is a gh process that exited non-zero. Stderr is trimmed and
// redacted; it never carries a token.
type ExitError struct {
	Args   string
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("gh %s failed (exit %d)", e.Args, e.Code)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// argSummary renders args for messages, bounded. Args never carry secrets.
func argSummary(args []string) string {
	s := strings.Join(args, " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// capBuffer is a bytes.Buffer that stops growing at max and remembers it.
type capBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

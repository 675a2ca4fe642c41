package localgh

import (
	"context"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Provider is the local-gh provider. It keeps no per-sentinel state in
// memory: everything is in the handle, so methods are safe for concurrent
// use on different handles.
type Provider struct {
	cfg Config
}

// New returns the provider for cfg.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("local-gh: %w", err)
	}
	return &Provider{cfg: cfg}, nil
}

// Client returns the REST client the provider polls with.
func (p *Provider) Client() *github.Client { return p.cfg.Client }

// Info implements providers.Provider.
func (p *Provider) Info() providers.Info {
	return providers.Info{
		Slug: Slug, Name: "Local gh", Version: "1.0.0",
		Description: "Polls GitHub pull requests and repositories with the host's gh credentials (or GH_TOKEN / GITHUB_TOKEN); no setup, no public URL.",
	}
}

// Capabilities implements providers.Provider (AIP-60 provider capabilities).
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{Subjects: []string{"github"}, Poll: true, TypicalLatencyMs: 30000}
}

// DefaultTypes implements providers.Provider: the PR set for a PR subject,
// the repo set for a repository subject, none otherwise.
func (p *Provider) DefaultTypes(subject string) []string {
	switch {
	case sentinel.IsGitHubPRSubject(subject):
		return sentinel.DefaultPRTypes()
	case sentinel.IsGitHubRepoSubject(subject):
		return sentinel.DefaultRepoTypes()
	}
	return []string{}
}

// Readiness implements providers.ReadinessChecker: a token from the
// environment, or gh installed and authenticated; CredentialSource says
// which (github.Credentials.Readiness).
func (p *Provider) Readiness(ctx context.Context) providers.Readiness {
	return p.cfg.Credentials.Readiness(ctx)
}

// Create implements providers.Provider. It accepts exactly one clause whose
// subject is a PR (github:owner/repo#N) or a repository (github:owner/repo,
// with any until but subject_terminal). Errors are *sentinel.Error values:
// invalid_input (clause count), invalid_subject, and
// subject_terminal_unsupported.
func (p *Provider) Create(_ context.Context, req providers.CreateRequest) (sentinel.Handle, error) {
	if len(req.Spec.Match) != 1 {
		return sentinel.Handle{}, sentinel.Errorf(sentinel.CodeInvalidInput,
			"local-gh: exactly one match clause is supported (one sentinel per PR or repository), got %d", len(req.Spec.Match))
	}
	subject := req.Spec.Match[0].Subject
	ref, err := sentinel.ParseGitHubSubject(subject)
	if err != nil || ref.Repo == "" {
		return sentinel.Handle{}, sentinel.Errorf(sentinel.CodeInvalidSubject,
			"local-gh: %q is not a github:owner/repo#number PR subject or a github:owner/repo repository", subject)
	}
	h := sentinel.Handle{Provider: Slug, State: map[string]any{"repo": ref.FullName()}}
	if o := optInFor(req.Spec.Match[0].Types); o != "" {
		h.State["optIn"] = o
	}
	if ref.Number > 0 {
		h.RemoteID = fmt.Sprintf("%s#%d", ref.FullName(), ref.Number)
		h.State["number"] = ref.Number
		return h, nil
	}
	if req.Spec.Until.Kind == sentinel.UntilSubjectTerminal {
		return sentinel.Handle{}, sentinel.Errorf(sentinel.CodeSubjectTerminalRepo,
			"local-gh: a repository watch (%s) never ends with a subject's terminal event; use until never (or at/count)", subject)
	}
	h.RemoteID = ref.FullName()
	return h, nil
}

// Attach implements providers.Provider: the handle is returned unchanged.
func (p *Provider) Attach(_ context.Context, h sentinel.Handle, _ providers.Delivery) (sentinel.Handle, error) {
	if _, err := handleRef(h); err != nil {
		return h, err
	}
	return h, nil
}

// Cancel implements providers.Provider: there is nothing remote to stop.
func (p *Provider) Cancel(context.Context, sentinel.Handle) error { return nil }

// Ack implements providers.Poller: the cursor carries all state, so there
// is nothing to acknowledge.
func (p *Provider) Ack(context.Context, sentinel.Handle, string) error { return nil }

// Status implements providers.Provider: failures, backoff state and the
// last error from the cursor, quota from the client. Extra never carries a
// credential.
func (p *Provider) Status(_ context.Context, h sentinel.Handle) (providers.Health, error) {
	ref, err := handleRef(h)
	if err != nil {
		return providers.Health{Detail: err.Error()}, nil
	}
	var hl health
	if ref.Number > 0 {
		hl = parsePRCursor(h.Cursor).health
	} else {
		hl = parseRepoCursor(h.Cursor).health
	}
	now := p.cfg.Now()
	st := p.cfg.Client.Stats()
	extra := map[string]any{
		"consecutiveFailures": hl.Failures,
		"backingOff":          hl.NextRetryAtMs > now.UnixMilli(),
		"requests":            st.Requests,
		"notModified":         st.NotModified,
		"quotaUsed":           st.QuotaUsed,
	}
	if hl.NextRetryAtMs > 0 {
		extra["nextRetryAt"] = sentinel.FormatTime(time.UnixMilli(hl.NextRetryAtMs))
	}
	if hl.LastError != "" {
		extra["lastError"] = hl.LastError
	}
	if st.RateRemaining >= 0 {
		extra["quotaRemaining"] = st.RateRemaining
		extra["quotaLimit"] = st.RateLimit
		if !st.RateReset.IsZero() {
			extra["quotaReset"] = sentinel.FormatTime(st.RateReset)
		}
	}
	if !st.BlockedUntil.IsZero() && st.BlockedUntil.After(now) {
		extra["rateLimitedUntil"] = sentinel.FormatTime(st.BlockedUntil)
	}
	health := providers.Health{OK: hl.Failures == 0, Extra: extra}
	if hl.Failures > 0 {
		health.Detail = hl.LastError
		if health.Detail == "" {
			health.Detail = fmt.Sprintf("GitHub polling failing (%d consecutive failures)", hl.Failures)
		}
	}
	return health, nil
}

// handleRef parses the handle's RemoteID ("owner/repo#N" or "owner/repo").
func handleRef(h sentinel.Handle) (sentinel.GitHubRef, error) {
	ref, err := sentinel.ParseGitHubSubject("github:" + h.RemoteID)
	if err != nil || ref.Repo == "" {
		return sentinel.GitHubRef{}, sentinel.Errorf(sentinel.CodeInvalidInput,
			"local-gh: handle remote id %q is not owner/repo#number or owner/repo", h.RemoteID)
	}
	return ref, nil
}

// Interface guards.
var (
	_ providers.Provider         = (*Provider)(nil)
	_ providers.Poller           = (*Provider)(nil)
	_ providers.ReadinessChecker = (*Provider)(nil)
)

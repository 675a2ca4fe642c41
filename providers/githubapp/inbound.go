package githubapp

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Inbound failure codes beyond the normalizer's reasons.
const (
	CodeMissingEventHeader = "missing_event_header"
	// CodeCoverageFailed (503): an installation change that could not be
	// recorded; GitHub's delivery fails and reconciliation brings it again.
	CodeCoverageFailed = "coverage_update_failed"
	// CodeLookupFailed (503): a fork PR's CI event whose PR GitHub could
	// not name just now; GitHub's delivery fails and reconciliation
	// brings it again, so it never lands on the wrong subject.
	CodeLookupFailed = github.CodeLookupFailed
)

// ParseInbound verifies and normalizes one delivery of the App's webhook.
// In order: a provider not set up answers providers.ErrUnknownHook; the
// X-Hub-Signature-256 HMAC over the raw body is checked against the App's
// webhook secret before anything is parsed (401 bad_signature);
// X-GitHub-Event is required (missing_event_header); a ping yields no
// events; installation and installation_repositories deliveries update the
// covered repositories and yield no events (503 coverage_update_failed
// when that cannot be recorded, for GitHub to fail the delivery and
// reconciliation to ask for it again); any other event is normalized as
// the webhook provider does (ids evt_<X-GitHub-Delivery>, the signed
// body's digest as DedupKey), with the same head lookup over the
// installation's client: a CI event that names no PR (a fork's) is mapped
// to its PR by its head commit, and when GitHub cannot say just now the
// delivery is refused with 503 github_lookup_failed.
func (p *Provider) ParseInbound(ctx context.Context, in providers.Inbound, _ sentinel.Handle) ([]sentinel.Event, error) {
	s, err := p.settings(ctx)
	if err != nil {
		return nil, err
	}
	if !s.complete() {
		return nil, providers.ErrUnknownHook
	}
	if reason := github.VerifyWebhookSignature(s.secret, in.Body, github.WebhookHeader(in.Header, github.WebhookSignatureHeader)); reason != "" {
		return nil, providers.BadSignature(reason)
	}
	event := github.WebhookHeader(in.Header, "X-GitHub-Event")
	switch event {
	case "":
		return nil, providers.BadPayload(CodeMissingEventHeader)
	case github.WebhookPing:
		return []sentinel.Event{}, nil
	case "installation", "installation_repositories":
		err := p.applyInstallation(ctx, event, in.Body)
		switch {
		case errors.Is(err, errBadInstallation):
			return nil, providers.BadPayload(github.ReasonInvalidPayload)
		case err != nil:
			p.cfg.Log.Warn("github-app installation change not recorded", "event", event, "err", err)
			return nil, &providers.InboundError{Status: http.StatusServiceUnavailable, Code: CodeCoverageFailed, Reason: providers.ReasonOf(err).String()}
		}
		p.forgetRepos()
		p.cfg.Log.Info("github-app installation change recorded", "event", event)
		return []sentinel.Event{}, nil
	}
	now := in.Now
	if now.IsZero() {
		now = p.cfg.Now()
	}
	return github.NormalizeDelivery(ctx, event, in.Header, in.Body,
		github.WebhookOptions{Source: Source, Now: now, Lookup: p.lookup}, p.cfg.Log)
}

// forgetRepos drops InstallationOf's memory (after an installation change).
func (p *Provider) forgetRepos() {
	p.mu.Lock()
	clear(p.repoCache)
	p.mu.Unlock()
}

package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/githubapp"
	"github.com/agentproto/sentinel/providers/localgh"
	"github.com/agentproto/sentinel/providers/webhook"
	"github.com/agentproto/sentinel/runtime/quota"
)

// quotaSink hands GitHub rate samples to the node's governor once it is
// open (the providers and their clients are built before it).
type quotaSink struct {
	g atomic.Pointer[quota.Governor]
}

// observe is the github.RateObserver of every in-process client.
func (s *quotaSink) observe(r github.RateSample) {
	if g := s.g.Load(); g != nil {
		g.Observe(quota.Sample{Credential: r.Credential, Resource: r.Resource, Limit: r.Limit, Remaining: r.Remaining,
			Used: r.Used, Reset: r.Reset, Known: r.Known, Free: r.Free, Secondary: r.Secondary, RetryAfter: r.RetryAfter})
	}
}

// hold is the github.HoldFunc of every in-process client: the governor's
// cluster-wide secondary-limit pause of the credential (none before the
// governor opened).
func (s *quotaSink) hold(credential string) time.Time {
	return s.g.Load().PausedUntil(credential)
}

// heldRunner is the webhook provider's gh runner (a token from gh: hook
// management, reconciliation, the self lookup) made to wait out the node
// token's cluster-wide pause, as the in-process clients do. gh's own
// answers report no rate samples: the pause comes from the in-process
// clients' answers on the same token.
type heldRunner struct {
	webhook.Runner
	hold github.HoldFunc
	now  func() time.Time
}

// API refuses without running gh while the node's token is paused.
func (r heldRunner) API(ctx context.Context, method, path string, body []byte) (int, http.Header, []byte, error) {
	if r.hold != nil {
		if until := r.hold("token"); r.now().Before(until) {
			wait := until.Sub(r.now())
			return 0, nil, nil, &providers.Error{Reason: providers.ReasonRateLimited, Retryable: true, RetryAfter: wait,
				Message: fmt.Sprintf("%s %s: GitHub secondary rate limit pause of credential token (cluster-wide) in force for %s more; gh not run",
					method, strings.TrimPrefix(path, "/"), wait.Round(time.Second))}
		}
	}
	return r.Runner.API(ctx, method, path, body)
}

// installationOf is what the github-app provider answers of a
// repository's installation (githubapp.Provider.InstallationOf).
type installationOf interface {
	InstallationOf(ctx context.Context, repo string) (int64, bool)
}

// credentialOf names what a poll spends: local-gh polls a repository the
// GitHub App covers with that installation's token ("installation:<id>"),
// others with the node's token ("token"), as their clients report them.
// Other providers' polls spend no GitHub quota the governor knows of.
func (a *App) credentialOf(provider string, h sentinel.Handle) (string, string, bool) {
	if provider != localgh.Slug {
		return "", "", false
	}
	if p, ok := a.Registry.Get(githubapp.Slug); ok {
		if io, ok := p.(installationOf); ok {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if inst, ok := io.InstallationOf(ctx, h.StateString("repo")); ok {
				return "installation:" + strconv.FormatInt(inst, 10), "core", true
			}
		}
	}
	return "token", "core", true
}

// openQuota opens the quota governor (its bucket provisioned) and points
// the providers' clients at it; the poll loop, built after it, takes it
// as its Budget.
func (a *App) openQuota(ctx context.Context) error {
	nodes := func() int {
		if a.Cluster == nil {
			return 1
		}
		return max(len(a.Cluster.LiveMembers()), 1)
	}
	g, err := quota.Open(ctx, a.Bus, quota.Config{Node: a.Cfg.Node.Name, Now: a.now, Log: a.Log.With("component", "quota"),
		Nodes: nodes, CredentialOf: a.credentialOf})
	if err != nil {
		return fmt.Errorf("quota governor: %w", err)
	}
	a.push("quota governor", func(context.Context) error { g.Stop(); return nil })
	a.quota.g.Store(g)
	a.Metrics.RegisterThrottledPolls(func() float64 { return float64(g.Throttled()) })
	return nil
}

// QuotaBudgets returns the cluster's GitHub budgets as this node knows
// them (none before the governor opened).
func (a *App) QuotaBudgets() []quota.Budget {
	if g := a.quota.g.Load(); g != nil {
		return g.Budgets()
	}
	return nil
}

// quotaFor is the sentinels service's Quota: the budgets of the
// credentials a provider's calls spend, as plain maps (the same shape in
// process and over the API): local-gh and webhook spend the node's token,
// github-app its App and installation credentials. With a sentinel's
// handle, the budget its polls spend (credentialOf: a local-gh sentinel on
// a repository the App covers spends that installation's).
func (a *App) quotaFor(provider string, h *sentinel.Handle) []map[string]any {
	cred, resource, one := "", "", false
	if h != nil {
		cred, resource, one = a.credentialOf(provider, *h)
	}
	var out []map[string]any
	for _, b := range a.QuotaBudgets() {
		var mine bool
		switch {
		case one:
			mine = b.Credential == cred && b.Resource == resource
		case provider == localgh.Slug || provider == webhook.Slug:
			mine = b.Credential == "token"
		case provider == githubapp.Slug:
			mine = b.Credential == "app" || strings.HasPrefix(b.Credential, "installation:")
		}
		if !mine || b.Remaining < 0 {
			continue
		}
		m := map[string]any{"credential": b.Credential, "resource": b.Resource, "limit": b.Limit,
			"remaining": b.Remaining, "used": b.Used, "reset": sentinel.FormatTime(b.Reset)}
		if b.Paused(a.now()) {
			m["pausedUntil"] = sentinel.FormatTime(b.PausedUntil)
		}
		out = append(out, m)
	}
	return out
}

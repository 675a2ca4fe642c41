package sentinels

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Adapter statuses.
const (
	AdapterSupported = "supported"
	AdapterAvailable = "available"
	AdapterReady     = "ready"
	// AdapterUnavailable is a discovered adapter that cannot be used (it
	// does not start, answers garbage or fails its handshake); the reason
	// is in info.unavailable. The spec lists supported, available and
	// ready: this fourth status never hides a broken adapter behind one
	// of those.
	AdapterUnavailable = "unavailable"
)

// Adapter is one entry of list_sentinel_adapters / GET /adapters. It never
// carries a credential.
type Adapter struct {
	Slug         string                 `json:"slug"`
	Name         string                 `json:"name"`
	Status       string                 `json:"status"`
	Version      string                 `json:"version"`
	Description  string                 `json:"description,omitempty"`
	Capabilities providers.Capabilities `json:"capabilities"`
	SetupFields  []providers.SetupField `json:"setupFields,omitempty"`
	Info         map[string]any         `json:"info,omitempty"`
}

// Adapters lists every provider with its readiness: ready, or available
// with the reason in info.readiness (never a false ready); a provider that
// names its credential's source has it in info.credentialSource too, and
// the GitHub budgets its calls spend in info.quota (Service.Quota); one
// whose endpoint the last setup changed says info.autoSelect false, with
// the reason. A
// provider that is unusable altogether (providers.AvailabilityChecker: a
// discovered adapter that fails its handshake) is unavailable with the
// reason in info.unavailable. The providers are asked at once, each within
// its own bounds, so one slow adapter delays the listing by its bound, not
// by the sum of them.
func (s *Service) Adapters(ctx context.Context) []Adapter {
	all := s.registry.All()
	out := make([]Adapter, len(all))
	var wg sync.WaitGroup
	for i, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = s.adapterOf(ctx, p)
		}()
	}
	wg.Wait()
	return out
}

// adapterOf is one provider's entry of the listing.
func (s *Service) adapterOf(ctx context.Context, p providers.Provider) Adapter {
	if ac, ok := p.(providers.AvailabilityChecker); ok {
		if reason := ac.Unavailable(ctx); reason != "" {
			inf := p.Info()
			return Adapter{Slug: inf.Slug, Name: inf.Name, Version: inf.Version, Description: inf.Description,
				Status: AdapterUnavailable, Info: map[string]any{"unavailable": reason}}
		}
	}
	inf := p.Info()
	a := Adapter{Slug: inf.Slug, Name: inf.Name, Version: inf.Version, Description: inf.Description, Capabilities: p.Capabilities(), Status: AdapterReady}
	if sf, ok := p.(providers.SetupFielder); ok {
		a.SetupFields = sf.SetupFields()
	}
	if s.endpointUnconfirmed(ctx, inf.Slug) {
		a.Info = map[string]any{"autoSelect": false, "autoSelectReason": unconfirmedReason}
	}
	if _, ok := p.(providers.ReadinessChecker); ok {
		r := readiness(ctx, p)
		if a.Info == nil {
			a.Info = map[string]any{}
		}
		a.Info["readiness"] = r
		if r.CredentialSource != "" {
			a.Info["credentialSource"] = r.CredentialSource
		}
		if !r.Ready {
			a.Status = AdapterAvailable
		}
	}
	if q := s.quotaOf(inf.Slug, nil); q != nil {
		if a.Info == nil {
			a.Info = map[string]any{}
		}
		a.Info["quota"] = q
	}
	return a
}

// quotaOf is the budgets provider's calls spend (with h, those of that
// sentinel's polls), or nil.
func (s *Service) quotaOf(provider string, h *sentinel.Handle) []map[string]any {
	if s.quota == nil {
		return nil
	}
	if q := s.quota(provider, h); len(q) > 0 {
		return q
	}
	return nil
}

// SetupResult reports a completed provider setup. Sensitive values are
// never echoed: only the names of the stored fields.
type SetupResult struct {
	Slug      string              `json:"slug"`
	Stored    []string            `json:"stored"`
	Readiness providers.Readiness `json:"readiness"`
	// EndpointUnconfirmed: the endpoint was set to a new value, so
	// auto-selection passes the provider by until a setup restates it.
	EndpointUnconfirmed bool `json:"endpointUnconfirmed,omitempty"`
}

// Setup stores a provider's setup fields in the credential store and
// records the setup in the ledger. Unknown fields and missing required
// fields are invalid_setup; a provider without setup fields is too. An
// endpoint field must be https (http only to loopback: insecure_url), and
// changing it without the sensitive fields in the same call is
// setup_credentials_required (see applySetup). The check and the write are
// one compare-and-set, so a concurrent setup cannot slip a new endpoint
// under a key given for the old one.
func (s *Service) Setup(ctx context.Context, slug string, fields map[string]string) (SetupResult, error) {
	p, ok := s.registry.Get(slug)
	if !ok {
		return SetupResult{}, sentinel.Errorf(sentinel.CodeProviderNotFound, "unknown adapter %q (known: %v)", slug, s.registry.Slugs())
	}
	sf, ok := p.(providers.SetupFielder)
	if !ok || len(sf.SetupFields()) == 0 {
		return SetupResult{}, sentinel.Errorf(sentinel.CodeInvalidSetup, "%s takes no setup fields", slug)
	}
	known := map[string]providers.SetupField{}
	for _, f := range sf.SetupFields() {
		known[f.Name] = f
	}
	for name, v := range fields {
		if _, ok := known[name]; !ok {
			return SetupResult{}, sentinel.Errorf(sentinel.CodeInvalidSetup, "%s has no setup field %q", slug, name)
		}
		if len(v) > 4096 {
			return SetupResult{}, sentinel.Errorf(sentinel.CodeInvalidSetup, "setup field %q is too long", name)
		}
	}
	if err := s.checkSetup(ctx, p, slug, fields); err != nil {
		return SetupResult{}, err
	}
	err := s.creds.Update(ctx, slug, func(cur map[string]string) (map[string]string, error) {
		return applySetup(slug, sf.SetupFields(), cur, fields)
	})
	if err != nil {
		return SetupResult{}, err
	}
	stored := make([]string, 0, len(fields))
	for name := range fields {
		stored = append(stored, name)
	}
	sort.Strings(stored)
	if s.ledger != nil {
		if err := s.ledger.Record(ctx, slug, stored, s.now().UnixMilli()); err != nil {
			s.log.Warn("setup ledger write failed", "provider", slug, "err", err)
		}
	}
	unconfirmed := false
	if s.creds != nil {
		unconfirmed, _ = s.creds.EndpointUnconfirmed(ctx, slug)
	}
	s.log.Info("provider setup stored", "provider", slug, "fields", stored, "endpoint_unconfirmed", unconfirmed)
	return SetupResult{Slug: slug, Stored: stored, Readiness: readiness(ctx, p), EndpointUnconfirmed: unconfirmed}, nil
}

// checkSetup lets a provider that judges its setup (providers.SetupChecker:
// an adapter's setup method) refuse the fields, laid over the stored ones,
// before anything is stored: invalid_setup with its reason.
func (s *Service) checkSetup(ctx context.Context, p providers.Provider, slug string, fields map[string]string) error {
	sc, ok := p.(providers.SetupChecker)
	if !ok {
		return nil
	}
	cur, err := s.creds.Credentials(ctx, slug)
	if err != nil {
		return err
	}
	if err := sc.CheckSetup(ctx, mergeFields(cur, fields)); err != nil {
		return sentinel.Errorf(sentinel.CodeInvalidSetup, "%v", err)
	}
	return nil
}

// Ledger records completed setups (which fields, when) in a KV bucket.
type Ledger struct {
	kv jetstream.KeyValue
}

// NewLedger returns the ledger.
func NewLedger(kv jetstream.KeyValue) *Ledger { return &Ledger{kv: kv} }

// Record writes the ledger entry of a setup.
func (l *Ledger) Record(ctx context.Context, slug string, fields []string, ts int64) error {
	raw, err := json.Marshal(map[string]any{"slug": slug, "fields": fields, "completedTs": ts})
	if err != nil {
		return err
	}
	if _, err := l.kv.Put(ctx, slug, raw); err != nil {
		return fmt.Errorf("setup ledger: %w", err)
	}
	return nil
}

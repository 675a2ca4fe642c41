package sentinels

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/providers"
)

// SessionChecker tells whether a target session may receive a new
// sentinel. The sessions registry implements it; a nil checker allows
// every valid session id.
type SessionChecker interface {
	// CheckTarget returns an *sentinel.Error with code session_not_alive
	// when the registry knows the session and it has ended.
	CheckTarget(ctx context.Context, sessionID string) error
}

// PollTrigger runs one poll tick now.
type PollTrigger interface {
	PollNow(ctx context.Context)
}

// EventPublisher publishes a sentinel's events into the events stream.
type EventPublisher interface {
	Publish(ctx context.Context, sentinelID string, events []sentinel.Event, origin string) (int, error)
}

// DefaultSelectionOrder is the auto-selection order: agentpush when ready,
// webhook when a stable public URL exists and it is ready, else local-gh.
var DefaultSelectionOrder = []string{"agentpush", "webhook", "local-gh"}

// Service is the sentinel service behind every surface.
type Service struct {
	Store     *Store
	Seen      *Seen
	Registry  *providers.Registry
	Expirer   *Expirer
	Creds     *CredStore
	Ledger    *Ledger
	PublicURL providers.PublicURLFunc
	// SelectionOrder overrides DefaultSelectionOrder.
	SelectionOrder []string
	Sessions       SessionChecker
	Poller         PollTrigger
	Publisher      EventPublisher
	Log            *slog.Logger
	Now            func() time.Time
	// ActiveIntervalMs is the poll interval handed to providers at create
	// and attach (default 15000).
	ActiveIntervalMs int
	// ProviderTimeout bounds provider create/attach/status calls (default
	// 30s).
	ProviderTimeout time.Duration

	// misses keeps unknown hook keys cheap (hookmiss.go).
	misses hookMisses
}

func (s *Service) publicURL() providers.PublicURL {
	if s.PublicURL == nil {
		return providers.PublicURL{}
	}
	return s.PublicURL()
}

func (s *Service) providerCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	d := s.ProviderTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

// Create validates the request, resolves the provider (explicit, never
// second-guessed; or auto-selected), mints the id, calls the provider's
// create and stores the record. Errors carry the spec's codes.
func (s *Service) Create(ctx context.Context, req sentinel.WatchRequest, caller string) (*sentinel.Sentinel, error) {
	spec, err := req.Expand(caller)
	if err != nil {
		return nil, err
	}
	if s.Sessions != nil {
		if err := s.Sessions.CheckTarget(ctx, spec.Target.SessionID); err != nil {
			return nil, err
		}
	}
	return s.CreateSpec(ctx, spec)
}

// CreateSpec creates a sentinel from a spec the caller built and validated
// (an MCP Events subscription's): provider resolution, the provider's
// create and the record, as Create does after expanding its request.
func (s *Service) CreateSpec(ctx context.Context, spec sentinel.Spec) (*sentinel.Sentinel, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	prov, err := s.resolveProvider(ctx, &spec)
	if err != nil {
		return nil, err
	}
	slug := prov.Info().Slug
	id := sentinel.NewSentinelID()
	pctx, cancel := s.providerCtx(ctx)
	defer cancel()
	delivery := providers.PreferredDelivery(pctx, prov, s.activeMs(), s.publicURL().URL)
	h, err := prov.Create(pctx, providers.CreateRequest{SentinelID: id, Spec: spec, Delivery: delivery})
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, slug) {
			msg = slug + ": " + msg
		}
		return nil, sentinel.Wrap(sentinel.CodeProviderCreateFail, err, msg)
	}
	if h.Provider == "" {
		h.Provider = slug
	}
	rec := &sentinel.Sentinel{
		ID:             id,
		Spec:           spec,
		Provider:       slug,
		Handle:         h,
		Status:         sentinel.StatusActive,
		CreatedTs:      s.Now().UnixMilli(),
		ClosedSubjects: []string{},
	}
	if err := s.Store.Create(ctx, rec); err != nil {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer ccancel()
		if cerr := prov.Cancel(cctx, h); cerr != nil {
			s.Log.Warn("cancel after a failed store create failed", "sentinel", id, "err", cerr)
		}
		return nil, sentinel.Wrap(sentinel.CodeCreateFailed, err, "storing the sentinel failed: "+err.Error())
	}
	s.Log.Info("sentinel created", "sentinel", id, "provider", slug, "session", spec.Target.SessionID)
	return rec, nil
}

func (s *Service) activeMs() int {
	if s.ActiveIntervalMs > 0 {
		return s.ActiveIntervalMs
	}
	return 15000
}

// resolveProvider returns the explicit provider (unknown_provider when it
// is not registered; its own setup error when it is not ready) or the
// auto-selected one.
func (s *Service) resolveProvider(ctx context.Context, spec *sentinel.Spec) (providers.Provider, error) {
	if spec.Provider != "" {
		p, ok := s.Registry.Get(spec.Provider)
		if !ok {
			return nil, sentinel.Errorf(sentinel.CodeUnknownProvider, "unknown provider %q (known: %v)", spec.Provider, s.Registry.Slugs())
		}
		if r := readiness(ctx, p); !r.Ready {
			return nil, sentinel.Errorf(sentinel.CodeProviderCreateFail, "%s is not ready: %s", spec.Provider, r.Reason)
		}
		return p, nil
	}
	return s.Select(ctx, spec)
}

// Select picks a provider for a spec without an explicit one: the first
// provider in the selection order that supports the subjects' scheme, has
// a stable public URL when it needs one, and is ready; else the last
// provider in the order that supports the scheme (local-gh for github
// subjects), ready or not; else any registered provider that supports it.
// A provider whose endpoint the last setup changed (and no setup
// confirmed since) is never auto-selected: a watch names it explicitly,
// so the subjects of a watch never go by themselves to a URL that was
// just set.
func (s *Service) Select(ctx context.Context, spec *sentinel.Spec) (providers.Provider, error) {
	scheme := sentinel.SchemeOf(spec.Match[0].Subject)
	order := s.SelectionOrder
	if len(order) == 0 {
		order = DefaultSelectionOrder
	}
	pub := s.publicURL()
	for _, slug := range order {
		p, ok := s.Registry.Get(slug)
		if !ok || !supportsScheme(p, scheme) || s.endpointUnconfirmed(ctx, slug) {
			continue
		}
		if p.Capabilities().NeedsPublicURL && (pub.URL == "" || !pub.Stable) {
			continue
		}
		if readiness(ctx, p).Ready {
			return p, nil
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if p, ok := s.Registry.Get(order[i]); ok && supportsScheme(p, scheme) && !p.Capabilities().NeedsPublicURL && !s.endpointUnconfirmed(ctx, order[i]) {
			return p, nil
		}
	}
	for _, p := range s.Registry.All() {
		if supportsScheme(p, scheme) && !s.endpointUnconfirmed(ctx, p.Info().Slug) {
			return p, nil
		}
	}
	return nil, sentinel.Errorf(sentinel.CodeUnknownProvider, "no provider supports %q subjects", scheme)
}

// unconfirmedReason says why a provider is not auto-selected.
const unconfirmedReason = "its endpoint changed in the last setup: name it as the watch's provider, or confirm the endpoint by restating it in a setup"

// endpointUnconfirmed reports whether auto-selection must pass the
// provider by (its endpoint changed in the last setup); a store it cannot
// read counts as unconfirmed.
func (s *Service) endpointUnconfirmed(ctx context.Context, slug string) bool {
	if s.Creds == nil {
		return false
	}
	u, err := s.Creds.EndpointUnconfirmed(ctx, slug)
	if err != nil {
		s.Log.Warn("reading a provider's setup failed; not auto-selecting it", "provider", slug, "err", err)
		return true
	}
	return u
}

func supportsScheme(p providers.Provider, scheme string) bool {
	for _, s := range p.Capabilities().Subjects {
		if s == "*" || s == scheme {
			return true
		}
	}
	return false
}

// readiness probes a provider that declares readiness; a panic counts as
// not ready. Providers without a probe are ready.
func readiness(ctx context.Context, p providers.Provider) (r providers.Readiness) {
	rc, ok := p.(providers.ReadinessChecker)
	if !ok {
		return providers.Readiness{Ready: true}
	}
	defer func() {
		if v := recover(); v != nil {
			r = providers.Readiness{Ready: false, Reason: fmt.Sprintf("readiness probe failed: %v", v)}
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return rc.Readiness(cctx)
}

// List returns every sentinel, oldest first.
func (s *Service) List(ctx context.Context) ([]*sentinel.Sentinel, error) { return s.Store.List(ctx) }

// Get returns one sentinel (sentinel_not_found when unknown). It reads the
// node's mirror, which may trail other nodes' writes (and is what a node
// cut off from its cluster still serves); an id the mirror does not know is
// asked of the bucket's leader in a cluster, so a sentinel another node
// created a moment ago is found.
func (s *Service) Get(ctx context.Context, id string) (*sentinel.Sentinel, error) {
	return s.lookup(ctx, id)
}

// leaderReadTimeout bounds a read from the records bucket's leader on an
// API path (Service.fresh, Store.Delete): without a leader (an election, a
// node cut off) the request would wait as long as its caller.
const leaderReadTimeout = 5 * time.Second

// lookup is Get: the mirror, then the leader for an id it does not know.
func (s *Service) lookup(ctx context.Context, id string) (*sentinel.Sentinel, error) {
	rec, _, err := s.Store.Peek(ctx, id)
	if errors.Is(err, ErrNotFound) && s.Store.LeaderGet != nil {
		rec, err = s.fresh(ctx, id)
	}
	return rec, err
}

// fresh reads the record from the bucket's leader (Store.Fresh) within
// leaderReadTimeout; a read the bus did not answer is marked retryable
// (503 unavailable).
func (s *Service) fresh(ctx context.Context, id string) (*sentinel.Sentinel, error) {
	ctx, cancel := context.WithTimeout(ctx, leaderReadTimeout)
	defer cancel()
	rec, _, err := s.Store.Fresh(ctx, id)
	return rec, bus.Retryable(err)
}

// Remove cancels the provider-side watch best effort (a failure never
// blocks removal) and deletes the record and its seen window.
func (s *Service) Remove(ctx context.Context, id string) error {
	rec, err := s.fresh(ctx, id)
	if err != nil {
		return err
	}
	s.Expirer.CancelProvider(ctx, rec)
	if err := s.Store.Delete(ctx, id); err != nil {
		return err
	}
	if err := s.Seen.Forget(ctx, id); err != nil {
		s.Log.Warn("dropping the seen window failed", "sentinel", id, "err", err)
	}
	s.Log.Info("sentinel removed", "sentinel", id)
	return nil
}

// StatusReport is the health of one sentinel's provider-side watch.
type StatusReport struct {
	OK        bool            `json:"ok"`
	Detail    string          `json:"detail,omitempty"`
	Status    sentinel.Status `json:"status"`
	Provider  string          `json:"provider"`
	LastError string          `json:"lastError,omitempty"`
	Extra     map[string]any  `json:"extra,omitempty"`
}

// Status reads the provider's health of the sentinel.
func (s *Service) Status(ctx context.Context, id string) (StatusReport, error) {
	rec, err := s.lookup(ctx, id)
	if err != nil {
		return StatusReport{}, err
	}
	rep := StatusReport{Status: rec.Status, Provider: rec.Provider, LastError: rec.LastError}
	prov, ok := s.Registry.Get(rec.Provider)
	if !ok {
		rep.Detail = fmt.Sprintf("unknown sentinel provider %q", rec.Provider)
		return rep, nil
	}
	pctx, cancel := s.providerCtx(ctx)
	defer cancel()
	h, err := prov.Status(pctx, rec.Handle)
	if err != nil {
		rep.Detail = err.Error()
		return rep, nil
	}
	rep.OK, rep.Detail, rep.Extra = h.OK, h.Detail, h.Extra
	if h.Pending != nil {
		if rep.Extra == nil {
			rep.Extra = map[string]any{}
		}
		rep.Extra["pending"] = *h.Pending
	}
	return rep, nil
}

// PollNow runs one poll tick over every pollable sentinel; id, when given,
// selects the sentinel whose post-poll state is returned (not_found when
// unknown).
func (s *Service) PollNow(ctx context.Context, id string) (*sentinel.Sentinel, error) {
	if id != "" {
		if _, err := s.lookup(ctx, id); err != nil {
			return nil, err
		}
	}
	if s.Poller != nil {
		s.Poller.PollNow(ctx)
	}
	if id == "" {
		return nil, nil
	}
	return s.lookup(ctx, id)
}

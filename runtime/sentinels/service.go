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

// Service is the sentinel service behind every surface. NewService
// builds it.
type Service struct {
	store     *Store
	seen      *Seen
	registry  *providers.Registry
	expirer   *Expirer
	creds     *CredStore
	ledger    *Ledger
	publisher EventPublisher
	// pubURL is the node's public URL, for push providers (nil: none),
	// set with WithPublicURL.
	pubURL providers.PublicURLFunc
	// selectionOrder overrides DefaultSelectionOrder.
	selectionOrder []string
	sessions       SessionChecker
	poller         PollTrigger
	log            *slog.Logger
	now            func() time.Time
	// activeIntervalMs is the poll interval handed to providers at create
	// and attach (default 15000).
	activeIntervalMs int
	// providerTimeout bounds provider create/attach/status calls (default
	// 30s).
	providerTimeout time.Duration
	// index is the watch index (watchindex.go): with it watches are
	// idempotent and keyed; nil creates a sentinel for every watch.
	index *WatchIndex
	// quota, when set, returns the GitHub budgets a provider's calls
	// spend (the quota governor's view; no credential in it), or with a
	// handle those one sentinel's polls spend: listings show them in
	// info.quota, a sentinel's status in extra.quota.
	quota func(provider string, h *sentinel.Handle) []map[string]any

	// misses keeps unknown hook keys cheap (hookmiss.go).
	misses hookMisses
}

// ErrMissingDep is NewService's refusal of a dependency left unset; the
// error names it.
var ErrMissingDep = errors.New("sentinels: dependency missing")

// ServiceDeps are what a service works with; every one is required.
type ServiceDeps struct {
	// Store reads and writes the sentinels' records.
	Store *Store
	// Seen is the long seen window (a push's duplicates).
	Seen *Seen
	// Registry knows the providers.
	Registry *providers.Registry
	// Expirer expires sentinels and cancels their providers.
	Expirer *Expirer
	// Creds holds the providers' stored credentials.
	Creds *CredStore
	// Ledger records each provider's setup.
	Ledger *Ledger
	// Publisher publishes pushed events into the events stream.
	Publisher EventPublisher
}

// Option sets one of a service's optional settings.
type Option func(*Service)

// WithLogger logs to l (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithClock reads the time from now (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithPublicURL tells push providers the node's public URL.
func WithPublicURL(f providers.PublicURLFunc) Option { return func(s *Service) { s.pubURL = f } }

// WithSelectionOrder overrides DefaultSelectionOrder.
func WithSelectionOrder(order []string) Option {
	return func(s *Service) { s.selectionOrder = order }
}

// WithSessions refuses new sentinels for sessions the checker knows have
// ended (default: every valid session id is allowed).
func WithSessions(c SessionChecker) Option { return func(s *Service) { s.sessions = c } }

// WithPoller runs a poll tick for PollNow (default: PollNow does nothing).
func WithPoller(p PollTrigger) Option { return func(s *Service) { s.poller = p } }

// WithActiveInterval is the poll interval handed to providers at create
// and attach (default 15 s).
func WithActiveInterval(d time.Duration) Option {
	return func(s *Service) { s.activeIntervalMs = int(d / time.Millisecond) }
}

// WithProviderTimeout bounds provider create/attach/status calls
// (default 30 s).
func WithProviderTimeout(d time.Duration) Option { return func(s *Service) { s.providerTimeout = d } }

// WithIndex makes watches idempotent and keyed through the watch index
// (default: every watch creates a sentinel).
func WithIndex(ix *WatchIndex) Option { return func(s *Service) { s.index = ix } }

// WithQuota shows the GitHub budgets a provider's calls spend (listings'
// info.quota; quota gets a nil handle) and those one sentinel's polls
// spend (its status's extra.quota; quota gets its handle: a local-gh
// sentinel on a repository the GitHub App covers spends the
// installation's budget, not the token's).
func WithQuota(quota func(provider string, h *sentinel.Handle) []map[string]any) Option {
	return func(s *Service) { s.quota = quota }
}

// NewService returns a service over d with opts applied; ErrMissingDep
// names a dependency left unset.
func NewService(d ServiceDeps, opts ...Option) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, fmt.Errorf("%w: Store", ErrMissingDep)
	case d.Seen == nil:
		return nil, fmt.Errorf("%w: Seen", ErrMissingDep)
	case d.Registry == nil:
		return nil, fmt.Errorf("%w: Registry", ErrMissingDep)
	case d.Expirer == nil:
		return nil, fmt.Errorf("%w: Expirer", ErrMissingDep)
	case d.Creds == nil:
		return nil, fmt.Errorf("%w: Creds", ErrMissingDep)
	case d.Ledger == nil:
		return nil, fmt.Errorf("%w: Ledger", ErrMissingDep)
	case d.Publisher == nil:
		return nil, fmt.Errorf("%w: Publisher", ErrMissingDep)
	}
	s := &Service{store: d.Store, seen: d.Seen, registry: d.Registry, expirer: d.Expirer, creds: d.Creds, ledger: d.Ledger, publisher: d.Publisher}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Expirer is the service's expirer (the start-up expiry sweep).
func (s *Service) Expirer() *Expirer { return s.expirer }

func (s *Service) publicURL() providers.PublicURL {
	if s.pubURL == nil {
		return providers.PublicURL{}
	}
	return s.pubURL()
}

func (s *Service) providerCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	d := s.providerTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

// Watched is what a watch did: the sentinel, and whether it was already
// there (Existing: an equal active sentinel of the session, or the key's
// with the same spec) or the key's sentinel was updated (Updated).
type Watched struct {
	Sentinel *sentinel.Sentinel
	Existing bool
	Updated  bool
}

// Create validates the request, resolves the provider (explicit, never
// second-guessed; or auto-selected), mints the id, calls the provider's
// create and stores the record. Errors carry the spec's codes. It is
// Watch without its flags.
func (s *Service) Create(ctx context.Context, req sentinel.WatchRequest, caller string) (*sentinel.Sentinel, error) {
	w, err := s.Watch(ctx, req, caller)
	return w.Sentinel, err
}

// Watch is Create made idempotent (issue 29, part 2): a watch whose
// clauses, until and urgency equal an active sentinel's of the same
// session returns that sentinel (Existing) unless req.AllowDuplicate; a
// watch with a Key returns the key's sentinel when the spec is the same,
// updates it when it is not (in place when it watches the same subjects
// through the same provider; else a new sentinel takes the key and the old
// one is removed), and creates it when the key is new. Both go through the
// watch index (watchindex.go): a compare-and-set claim, so nodes racing on
// one watch create one sentinel. Without an index every watch creates.
func (s *Service) Watch(ctx context.Context, req sentinel.WatchRequest, caller string) (Watched, error) {
	spec, err := req.Expand(caller)
	if err != nil {
		return Watched{}, err
	}
	if s.sessions != nil {
		if err := s.sessions.CheckTarget(ctx, spec.Target.SessionID); err != nil {
			return Watched{}, err
		}
	}
	switch {
	case s.index == nil || (req.AllowDuplicate && spec.Key == ""):
		rec, err := s.createSpec(ctx, spec, "")
		return Watched{Sentinel: rec}, err
	case spec.Key != "":
		return s.watchKey(ctx, spec)
	}
	key := dupIndexKey(spec)
	c, err := s.resolve(ctx, key, func(r *sentinel.Sentinel) bool { return r.Spec.Key == "" && sameWatch(r, spec) })
	if err != nil {
		return Watched{}, err
	}
	if c.live != nil {
		return Watched{Sentinel: c.live, Existing: true}, nil
	}
	rec, err := s.createSpec(ctx, spec, c.id)
	if err != nil {
		s.release(ctx, key, c.rev)
		return Watched{}, err
	}
	return Watched{Sentinel: rec}, nil
}

// watchKey upserts the sentinel of spec's key.
func (s *Service) watchKey(ctx context.Context, spec sentinel.Spec) (Watched, error) {
	key := keyIndexKey(spec)
	c, err := s.resolve(ctx, key, func(r *sentinel.Sentinel) bool { return r.Spec.Key == spec.Key })
	if err != nil {
		return Watched{}, err
	}
	if c.live == nil {
		rec, err := s.createSpec(ctx, spec, c.id)
		if err != nil {
			s.release(ctx, key, c.rev)
			return Watched{}, err
		}
		return Watched{Sentinel: rec}, nil
	}
	old := c.live
	if sameWatch(old, spec) && old.Spec.Group == spec.Group && old.Spec.Label == spec.Label && old.Spec.MuteSelf == spec.MuteSelf && old.Spec.BatchMs == spec.BatchMs &&
		(spec.Provider == "" || spec.Provider == old.Provider) {
		return Watched{Sentinel: old, Existing: true}, nil
	}
	if (spec.Provider == "" || spec.Provider == old.Provider) && sameSubjects(old.Spec, spec) {
		updated, err := s.store.Update(ctx, old.ID, func(r *sentinel.Sentinel) error {
			r.Spec.Match, r.Spec.Until, r.Spec.Target.Urgency = spec.Match, spec.Until, spec.Target.Urgency
			r.Spec.Group, r.Spec.Label, r.Spec.MuteSelf, r.Spec.BatchMs = spec.Group, spec.Label, spec.MuteSelf, spec.BatchMs
			return nil
		})
		if err != nil {
			return Watched{}, err
		}
		s.log.Info("sentinel updated by its watch key", "sentinel", old.ID, "session", spec.Target.SessionID)
		return Watched{Sentinel: updated, Updated: true}, nil
	}
	// Other subjects or another provider: a new sentinel takes the key.
	e, err := s.index.kv.Get(ctx, key)
	if err != nil {
		return Watched{}, fmt.Errorf("watch index: %w", bus.Retryable(err))
	}
	id := sentinel.NewSentinelID()
	rev, err := s.point(ctx, key, id, e.Revision())
	if err != nil {
		return Watched{}, err
	}
	rec, err := s.createSpec(ctx, spec, id)
	if err != nil {
		// The old sentinel still watches: give the key back to it.
		if _, perr := s.point(ctx, key, old.ID, rev); perr != nil {
			s.release(ctx, key, rev)
		}
		return Watched{}, err
	}
	if err := s.Remove(ctx, old.ID); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Warn("removing the sentinel a watch key replaced failed", "sentinel", old.ID, "err", err)
	}
	s.log.Info("sentinel replaced by its watch key", "sentinel", id, "replaced", old.ID)
	return Watched{Sentinel: rec, Updated: true}, nil
}

// sameSubjects reports whether two specs watch the same subjects, in order.
func sameSubjects(a, b sentinel.Spec) bool {
	if len(a.Match) != len(b.Match) {
		return false
	}
	for i := range a.Match {
		if a.Match[i].Subject != b.Match[i].Subject {
			return false
		}
	}
	return true
}

// CreateSpec creates a sentinel from a spec the caller built and validated
// (an MCP Events subscription's): provider resolution, the provider's
// create and the record, as Create does after expanding its request.
func (s *Service) CreateSpec(ctx context.Context, spec sentinel.Spec) (*sentinel.Sentinel, error) {
	return s.createSpec(ctx, spec, "")
}

// createSpec is CreateSpec with the id the watch index claimed ("" mints
// one). An auto-selected provider that is not ready is used as before and
// named in the record's warnings (issue 29, part 3); one whose create
// fails because its hook could not be made falls back to the last
// provider of the order that needs no hook, with a warning.
func (s *Service) createSpec(ctx context.Context, spec sentinel.Spec, id string) (*sentinel.Sentinel, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	prov, ready, err := s.resolveProviderReady(ctx, &spec)
	if err != nil {
		return nil, err
	}
	var warnings []sentinel.Warning
	if !ready.Ready {
		warnings = append(warnings, notReadyWarning(prov.Info().Slug, ready))
	}
	if id == "" {
		id = sentinel.NewSentinelID()
	}
	h, err := s.providerCreate(ctx, prov, id, spec)
	if err != nil && spec.Provider == "" && prov.Capabilities().NeedsPublicURL {
		if fb := s.fallback(ctx, spec); fb != nil && fb.Info().Slug != prov.Info().Slug {
			warnings = append(warnings, sentinel.Warning{Code: sentinel.WarnHookNotCreated, Provider: prov.Info().Slug,
				Message: err.Error() + "; watching through " + fb.Info().Slug + " (polling) instead",
				Fix:     "check the webhook provider's credentials (admin:repo_hook on the repository) and public URL, then watch again with provider " + prov.Info().Slug})
			prov = fb
			if r := readiness(ctx, fb); !r.Ready {
				warnings = append(warnings, notReadyWarning(fb.Info().Slug, r))
			}
			h, err = s.providerCreate(ctx, prov, id, spec)
		}
	}
	if err != nil {
		return nil, err
	}
	slug := prov.Info().Slug
	if w, ok := s.reachWarning(ctx, prov, spec); ok {
		warnings = append(warnings, w)
	}
	rec := &sentinel.Sentinel{
		ID:             id,
		Spec:           spec,
		Provider:       slug,
		Handle:         h,
		Status:         sentinel.StatusActive,
		CreatedTs:      s.now().UnixMilli(),
		ClosedSubjects: []string{},
		Warnings:       warnings,
	}
	if err := s.store.Create(ctx, rec); err != nil {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer ccancel()
		if cerr := prov.Cancel(cctx, h); cerr != nil {
			s.log.Warn("cancel after a failed store create failed", "sentinel", id, "err", cerr)
		}
		return nil, sentinel.Wrap(sentinel.CodeCreateFailed, err, "storing the sentinel failed: "+err.Error())
	}
	s.log.Info("sentinel created", "sentinel", id, "provider", slug, "session", spec.Target.SessionID, "warnings", len(warnings))
	return rec, nil
}

// providerCreate calls the provider's create for id, bounded.
func (s *Service) providerCreate(ctx context.Context, prov providers.Provider, id string, spec sentinel.Spec) (sentinel.Handle, error) {
	slug := prov.Info().Slug
	pctx, cancel := s.providerCtx(ctx)
	defer cancel()
	delivery := providers.PreferredDelivery(pctx, prov, s.activeMs(), s.publicURL().URL)
	h, err := prov.Create(pctx, providers.CreateRequest{SentinelID: id, Spec: spec, Delivery: delivery})
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, slug) {
			msg = slug + ": " + msg
		}
		return sentinel.Handle{}, sentinel.Wrap(sentinel.CodeProviderCreateFail, err, msg)
	}
	if h.Provider == "" {
		h.Provider = slug
	}
	return h, nil
}

// notReadyWarning is the provider_not_ready warning of a provider.
func notReadyWarning(slug string, r providers.Readiness) sentinel.Warning {
	fix := r.Fix
	if fix == "" {
		fix = "run `sentinel setup " + slug + "` (see `sentinel status`)"
	}
	reason := r.Reason
	if reason == "" {
		reason = slug + " is not ready"
	}
	return sentinel.Warning{Code: sentinel.WarnProviderNotReady, Provider: slug,
		Message: slug + " is not ready, so nothing will be delivered until it is: " + reason, Fix: fix}
}

// reachWarning asks a provider that can tell whether the watched
// repository is reachable with its credentials (providers.ReachChecker).
func (s *Service) reachWarning(ctx context.Context, prov providers.Provider, spec sentinel.Spec) (sentinel.Warning, bool) {
	rc, ok := prov.(providers.ReachChecker)
	if !ok {
		return sentinel.Warning{}, false
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg, fix := rc.Reachable(cctx, spec)
	if msg == "" {
		return sentinel.Warning{}, false
	}
	return sentinel.Warning{Code: sentinel.WarnRepoUnreachable, Provider: prov.Info().Slug, Message: msg, Fix: fix}, true
}

func (s *Service) activeMs() int {
	if s.activeIntervalMs > 0 {
		return s.activeIntervalMs
	}
	return 15000
}

// List returns every sentinel, oldest first.
func (s *Service) List(ctx context.Context) ([]*sentinel.Sentinel, error) { return s.store.List(ctx) }

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
	rec, _, err := s.store.Peek(ctx, id)
	if errors.Is(err, ErrNotFound) && s.store.leaderReads() {
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
	rec, _, err := s.store.Fresh(ctx, id)
	return rec, bus.Retryable(err)
}

// Remove cancels the provider-side watch best effort (a failure never
// blocks removal) and deletes the record and its seen window.
func (s *Service) Remove(ctx context.Context, id string) error {
	rec, err := s.fresh(ctx, id)
	if err != nil {
		return err
	}
	s.expirer.CancelProvider(ctx, rec)
	if err := s.store.Delete(ctx, id); err != nil {
		return err
	}
	s.unindex(ctx, rec)
	if err := s.seen.Forget(ctx, id); err != nil {
		s.log.Warn("dropping the seen window failed", "sentinel", id, "err", err)
	}
	s.log.Info("sentinel removed", "sentinel", id)
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
	prov, ok := s.registry.Get(rec.Provider)
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
	if q := s.quotaOf(rec.Provider, &rec.Handle); q != nil {
		if rep.Extra == nil {
			rep.Extra = map[string]any{}
		}
		rep.Extra["quota"] = q
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
	if s.poller != nil {
		s.poller.PollNow(ctx)
	}
	if id == "" {
		return nil, nil
	}
	return s.lookup(ctx, id)
}

package sessions

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentproto/sentinel"
)

// SentinelCreator is the part of the sentinel service auto-link uses
// (*sentinels.Service satisfies it).
type SentinelCreator interface {
	Create(ctx context.Context, req sentinel.WatchRequest, caller string) (*sentinel.Sentinel, error)
	List(ctx context.Context) ([]*sentinel.Sentinel, error)
}

// FallbackProvider is the provider auto-link retries on once.
const FallbackProvider = "local-gh"

// AutoLink creates a sentinel for a session's newly recorded open PR
// (AIP-60 "PR auto-link"): the session's opt-out first, then the enabled
// switch (WithAutoLinkEnabled, read fresh on every PR), then no existing sentinel for (subject, session);
// default PR types, until subject_terminal, urgency next-turn, label
// auto:pr#N, group = the session id; provider auto-selection, retried once
// on local-gh. Runs in its own goroutines; failures are logged and
// swallowed.
type AutoLink struct {
	sentinels SentinelCreator
	enabled   func() bool
	log       *slog.Logger
	// timeout bounds one auto-link (default 60 s).
	timeout time.Duration

	mu       sync.Mutex
	wg       sync.WaitGroup
	stopping atomic.Bool
}

// AutoLinkOption sets one of an auto-link's optional settings.
type AutoLinkOption func(*AutoLink)

// WithAutoLinkEnabled is the switch read on every PR (default: always on).
func WithAutoLinkEnabled(enabled func() bool) AutoLinkOption {
	return func(a *AutoLink) { a.enabled = enabled }
}

// WithAutoLinkLogger logs to l (default: discard).
func WithAutoLinkLogger(l *slog.Logger) AutoLinkOption { return func(a *AutoLink) { a.log = l } }

// WithAutoLinkTimeout bounds one auto-link (default 60 s).
func WithAutoLinkTimeout(d time.Duration) AutoLinkOption { return func(a *AutoLink) { a.timeout = d } }

// NewAutoLink returns an auto-link creating sentinels through sentinels,
// with opts applied.
func NewAutoLink(sentinels SentinelCreator, opts ...AutoLinkOption) *AutoLink {
	a := &AutoLink{sentinels: sentinels}
	for _, o := range opts {
		o(a)
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	return a
}

// PROpened is the registry's PR hook: it starts one auto-link run.
func (a *AutoLink) PROpened(ctx context.Context, s Session, pr sentinel.SessionPR, isNew bool) {
	if !isNew || pr.State != PROpen {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopping.Load() {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		timeout := a.timeout
		if timeout <= 0 {
			timeout = time.Minute
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		a.Link(cctx, s, pr.URL)
	}()
}

// Stop waits for running auto-links. Idempotent.
func (a *AutoLink) Stop() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.stopping.Store(true)
	a.mu.Unlock()
	a.wg.Wait()
}

// Link runs one auto-link synchronously and reports the created sentinel
// (nil when gated, already linked or failed).
func (a *AutoLink) Link(ctx context.Context, s Session, prURL string) *sentinel.Sentinel {
	log := a.log.With("session", s.ID, "pr", prURL)
	if !s.Sentinel {
		log.Debug("auto-link skipped: the session opted out")
		return nil
	}
	if a.enabled != nil && !a.enabled() {
		log.Debug("auto-link skipped: sentinel.autoWatchPrs is off")
		return nil
	}
	ref, err := sentinel.ParsePRURL(prURL)
	if err != nil {
		log.Warn("auto-link skipped: bad PR URL", "err", err)
		return nil
	}
	existing, err := a.sentinels.List(ctx)
	if err != nil {
		log.Warn("auto-link failed: listing sentinels", "err", err)
		return nil
	}
	subject := ref.Subject()
	for _, rec := range existing {
		if rec.Spec.Target.SessionID != s.ID {
			continue
		}
		for _, c := range rec.Spec.Match {
			if c.Subject == subject {
				log.Debug("auto-link skipped: already watched", "sentinel", rec.ID)
				return nil
			}
		}
	}
	muteSelf := true
	req := sentinel.WatchRequest{
		PRURL: prURL, SessionID: s.ID, Urgency: sentinel.UrgencyNextTurn,
		Label: AutoLinkLabelPrefix + strconv.Itoa(ref.Number), Group: s.ID,
		MuteSelf: &muteSelf, // the loop shield: the session's own pushes and comments do not wake it
	}
	rec, err := a.sentinels.Create(ctx, req, "")
	if err != nil {
		log.Warn("auto-link failed; retrying on "+FallbackProvider, "err", err)
		req.Provider = FallbackProvider
		if rec, err = a.sentinels.Create(ctx, req, ""); err != nil {
			log.Warn("auto-link failed", "err", err)
			return nil
		}
	}
	log.Info("auto-linked PR", "sentinel", rec.ID, "provider", rec.Provider)
	return rec
}

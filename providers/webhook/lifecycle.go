package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// noPublicURL is the setup error of a create without a public URL.
func noPublicURL() *providers.Error {
	return providers.SetupError("the webhook provider needs a public URL for GitHub to reach this daemon: set AGENTPROTO_PUBLIC_URL to its public origin, or start a named tunnel with a stable hostname")
}

// insecurePublicURL is the setup error of a plain-http public URL off
// loopback without public_url_allow_http.
func insecurePublicURL(origin string) *providers.Error {
	return providers.SetupError("the public URL %s is plain http: GitHub would send the signed deliveries, and the hook URL, in clear; "+
		"use an https public URL (AGENTPROTO_PUBLIC_URL), or set public_url_allow_http: true (AGENTPROTO_PUBLIC_URL_ALLOW_HTTP=true) to accept it", origin)
}

// origin returns the public origin without a trailing slash, "" if none.
func (p *Provider) origin(d providers.Delivery) string {
	u := p.cfg.PublicURL().URL
	if u == "" {
		u = d.CallbackURL
	}
	return strings.TrimRight(u, "/")
}

// usableOrigin returns origin(d), or the setup error that forbids using
// it: none known (noPublicURL), or plain http to a host that is not
// loopback without Config.AllowHTTP (insecurePublicURL).
func (p *Provider) usableOrigin(d providers.Delivery) (string, *providers.Error) {
	origin := p.origin(d)
	if origin == "" {
		return "", noPublicURL()
	}
	if u, err := url.Parse(origin); err == nil && u.Scheme == "http" && !providers.IsLoopbackHost(u.Hostname()) && !p.cfg.AllowHTTP {
		return "", insecurePublicURL(origin)
	}
	return origin, nil
}

// Create registers a new holder on the repository's hook, creating the hook
// when the repository has none, and subscribes the hook to the events the
// sentinel's types need beside the others' (hookEventsFor). Without a public URL, or with a plain-http
// one off loopback (unless Config.AllowHTTP), it fails with a setup error
// and makes no gh call; a repository the token cannot manage fails
// with a setup error naming the fix.
func (p *Provider) Create(ctx context.Context, req providers.CreateRequest) (sentinel.Handle, error) {
	repo, err := github.SpecRepository(req.Spec)
	if err != nil {
		return sentinel.Handle{}, err
	}
	origin, perr := p.usableOrigin(req.Delivery)
	if perr != nil {
		return sentinel.Handle{}, perr
	}
	holder := newHolder()
	needs := p.hookEventsFor(req.Spec)
	var rec *hookRecord
	err = p.withRepoLock(ctx, repo, func() error {
		var err error
		rec, err = p.ensureHook(ctx, repo, origin, "", holder, needs, true)
		return err
	})
	if err != nil {
		return sentinel.Handle{}, err
	}
	p.cfg.Log.Info("webhook holder added", "repo", rec.Repo, "hookId", rec.HookID, "holder", holder, "sentinel", req.SentinelID)
	return handleFor(rec, holder), nil
}

// Attach re-attaches a handle at start-up. It is tolerant: a handle missing
// its state, or no usable public URL (a named tunnel may start later; a
// refused plain-http one is logged), returns the handle unchanged without a
// gh call. Otherwise it re-points the hook when
// the public URL changed (keeping key and secret), re-creates it when it
// was deleted behind our back (keeping the route key and holders, with a
// new secret), re-registers a holder the record lost, and re-subscribes
// the hook when its events are not what its holders need. Only a definite
// 404 re-creates; other gh errors are tolerated.
func (p *Provider) Attach(ctx context.Context, h sentinel.Handle, d providers.Delivery) (sentinel.Handle, error) {
	repo, key, holder := h.StateString("repo"), h.StateString("hookKey"), h.StateString("holder")
	if repo == "" || key == "" || holder == "" {
		return h, nil
	}
	origin, perr := p.usableOrigin(d)
	if perr != nil {
		if p.origin(d) != "" {
			p.cfg.Log.Warn("webhook hook not re-pointed: the public URL is refused", "repo", repo, "reason", perr.Message)
		}
		return h, nil
	}
	var rec *hookRecord
	err := p.withRepoLock(ctx, repo, func() error {
		var err error
		rec, err = p.ensureHook(ctx, repo, origin, key, holder, nil, false)
		return err
	})
	if err != nil {
		return h, err
	}
	return handleFor(rec, holder), nil
}

// Cancel removes the handle's holder. The GitHub hook is deleted with the
// last holder (a 404 counts as deleted), then the record. A real delete
// failure keeps the unheld record (a later create reuses the hook, a
// retried cancel deletes it) and is returned. Cancelling twice, or a handle
// whose record is gone, is a no-op.
func (p *Provider) Cancel(ctx context.Context, h sentinel.Handle) error {
	repo, holder := h.StateString("repo"), h.StateString("holder")
	if repo == "" || holder == "" {
		return nil
	}
	return p.withRepoLock(ctx, repo, func() error {
		rec, rev, err := p.store().load(ctx, repo)
		if err != nil || rec == nil {
			return err
		}
		if rec.removeHolder(holder) {
			if _, err = p.store().save(ctx, rec, rev); err != nil {
				return err
			}
		} else if len(rec.Holders) > 0 {
			return nil
		}
		// No holder left: delete the hook (again, when an earlier delete
		// failed and the unheld record stayed: a retried cancel finishes it).
		if len(rec.Holders) > 0 {
			p.cfg.Log.Info("webhook holder removed", "repo", rec.Repo, "hookId", rec.HookID, "holder", holder, "holders", len(rec.Holders))
			p.narrow(ctx, rec)
			return nil
		}
		if err := p.deleteHook(ctx, rec.Repo, rec.HookID); err != nil {
			p.cfg.Log.Warn("webhook hook delete failed; record kept unheld", "repo", rec.Repo, "hookId", rec.HookID, "err", err)
			return err
		}
		p.forget(rec.Repo)
		p.cfg.Log.Info("webhook hook deleted with its last holder", "repo", rec.Repo, "hookId", rec.HookID, "holder", holder)
		return p.store().remove(ctx, rec)
	})
}

// ensureHook makes sure the repository has a live hook pointing at origin,
// subscribed to what its holders need, and that holder is registered
// (with needs, when given: Create), and returns the saved record. The
// caller holds the repository lock. key, when set (attach), is the route
// key to keep if the record must be rebuilt. strict (create) fails on any
// gh error; tolerant (attach) re-creates only on a definite 404.
func (p *Provider) ensureHook(ctx context.Context, repo, origin, key, holder string, needs []string, strict bool) (*hookRecord, error) {
	st := p.store()
	rec, rev, err := st.load(ctx, repo)
	if err != nil {
		return nil, err
	}
	var prevID int64
	if rec != nil {
		prevID = rec.HookID
	}
	fresh := rec == nil
	if fresh {
		if key == "" {
			key = newRouteKey()
		}
		rec = &hookRecord{Key: key, Repo: repo, CreatedAt: sentinel.FormatTime(p.cfg.Now()), Holders: []string{}}
	}
	rec.addHolder(holder)
	if needs != nil {
		rec.setNeeds(holder, needs)
	}
	if fresh {
		if err := p.recreate(ctx, rec, origin); err != nil {
			return nil, err
		}
	} else if err := p.verify(ctx, rec, origin, strict); err != nil {
		return nil, err
	}
	if _, err := st.save(ctx, rec, rev); err != nil {
		if rec.HookID != prevID {
			// The new hook has no record: remove it rather than orphan it.
			if derr := p.deleteHook(context.WithoutCancel(ctx), rec.Repo, rec.HookID); derr != nil {
				p.cfg.Log.Warn("webhook could not remove a hook whose record was not saved", "repo", rec.Repo, "hookId", rec.HookID, "err", derr)
			}
			p.forget(rec.Repo)
		}
		return nil, err
	}
	return rec, nil
}

// verify checks an existing record's hook: gone (404) -> re-create keeping
// key and holders; pointing elsewhere or subscribed to other events than
// its holders need -> PATCH keeping the secret (a 404 on the PATCH
// re-creates). Other gh errors fail in strict mode and are tolerated
// otherwise.
func (p *Provider) verify(ctx context.Context, rec *hookRecord, origin string, strict bool) error {
	wantURL, events := hookURL(origin, rec.Key), rec.wantEvents()
	seen := seenKey(wantURL, events)
	if !strict && p.recentlyVerified(rec.Repo, seen) {
		return nil
	}
	h, err := p.getHook(ctx, rec.Repo, rec.HookID)
	switch {
	case isNotFound(err):
		p.cfg.Log.Warn("webhook hook is gone on GitHub; re-creating it", "repo", rec.Repo, "hookId", rec.HookID)
		return p.recreate(ctx, rec, origin)
	case err != nil && strict:
		return p.cannotManage(rec.Repo, err)
	case err != nil:
		p.cfg.Log.Warn("webhook hook check failed; keeping the record", "repo", rec.Repo, "hookId", rec.HookID, "err", err)
		return nil
	}
	if h.Config.URL != wantURL || rec.Origin != origin || !sameEvents(h.Events, events) {
		err := p.repointHook(ctx, rec, origin, events)
		switch {
		case isNotFound(err):
			return p.recreate(ctx, rec, origin)
		case err != nil && strict:
			return p.cannotManage(rec.Repo, err)
		case err != nil:
			p.cfg.Log.Warn("webhook hook re-point failed", "repo", rec.Repo, "hookId", rec.HookID, "err", err)
			return nil
		}
		p.cfg.Log.Info("webhook hook re-pointed", "repo", rec.Repo, "hookId", rec.HookID, "origin", origin, "events", events)
		rec.Origin = origin
	}
	rec.Events = events
	p.remember(rec.Repo, seen)
	return nil
}

// narrow re-subscribes the hook to what its remaining holders need, after
// one left (best effort: a failure leaves the hook subscribed to more, which
// costs only ignored deliveries, and the next attach fixes it). The caller
// holds the repository lock and saves rec.
func (p *Provider) narrow(ctx context.Context, rec *hookRecord) {
	events := rec.wantEvents()
	if len(rec.Events) > 0 && sameEvents(rec.Events, events) {
		return
	}
	if err := p.repointHook(ctx, rec, rec.Origin, events); err != nil {
		p.cfg.Log.Warn("webhook hook not narrowed to its holders' events", "repo", rec.Repo, "hookId", rec.HookID, "err", err)
		return
	}
	rec.Events = events
	p.forget(rec.Repo)
	if _, rev, err := p.store().load(ctx, rec.Repo); err == nil && rev > 0 {
		if _, err := p.store().save(ctx, rec, rev); err != nil {
			p.cfg.Log.Warn("webhook hook narrowed but its record not saved", "repo", rec.Repo, "err", err)
		}
	}
	p.cfg.Log.Info("webhook hook narrowed to its holders' events", "repo", rec.Repo, "hookId", rec.HookID, "events", events)
}

// recreate creates a hook for rec with a new secret, keeping its key and
// holders, subscribed to what they need.
func (p *Provider) recreate(ctx context.Context, rec *hookRecord, origin string) error {
	secret := newSecret()
	events := rec.wantEvents()
	id, err := p.createHook(ctx, rec.Repo, origin, rec.Key, secret, events)
	if err != nil {
		return err
	}
	rec.HookID, rec.Secret, rec.Origin, rec.Events = id, secret, origin, events
	rec.Reconcile = nil
	p.cfg.Log.Info("webhook hook created", "repo", rec.Repo, "hookId", id, "origin", origin, "events", events)
	p.remember(rec.Repo, seenKey(hookURL(origin, rec.Key), events))
	return nil
}

// hookEventsFor is what a sentinel of spec needs its hook subscribed to:
// github.HookEventsFor over every clause's types (the defaults for a
// clause without any).
func (p *Provider) hookEventsFor(spec sentinel.Spec) []string {
	var globs []string
	for _, c := range spec.Match {
		if len(c.Types) == 0 {
			globs = append(globs, p.DefaultTypes(c.Subject)...)
			continue
		}
		globs = append(globs, c.Types...)
	}
	return github.HookEventsFor(globs)
}

// seenKey is what recentlyVerified remembers of a hook: its URL and events.
func seenKey(url string, events []string) string { return url + " " + strings.Join(events, ",") }

// withRepoLock runs fn under the repository's cross-node lock.
func (p *Provider) withRepoLock(ctx context.Context, repo string, fn func() error) error {
	unlock, err := p.cfg.Locker.Lock(ctx, lockName(repo))
	if err != nil {
		return fmt.Errorf("lock hook of %s: %w", repo, err)
	}
	defer unlock()
	return fn()
}

func (p *Provider) store() store { return store{kv: p.cfg.Store} }

// verifyTTL bounds how long a hook this process saw live is trusted
// without another GET during attach.
const verifyTTL = time.Minute

func (p *Provider) recentlyVerified(repo, url string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.verified[repoKey(repo)]
	return ok && v.url == url && p.cfg.Now().Sub(v.at) < verifyTTL
}

func (p *Provider) remember(repo, url string) {
	p.mu.Lock()
	p.verified[repoKey(repo)] = verifiedHook{url: url, at: p.cfg.Now()}
	p.mu.Unlock()
}

func (p *Provider) forget(repo string) {
	p.mu.Lock()
	delete(p.verified, repoKey(repo))
	p.mu.Unlock()
}

// handleFor is the handle of holder on rec's hook. It carries no secret.
func handleFor(rec *hookRecord, holder string) sentinel.Handle {
	return sentinel.Handle{
		Provider: Slug,
		RemoteID: strconv.FormatInt(rec.HookID, 10),
		State:    map[string]any{"repo": rec.Repo, "hookKey": rec.Key, "holder": holder},
	}
}

// errRecordMissing is the status detail of a handle whose record is gone.
var errRecordMissing = errors.New("webhook record is missing — re-create the sentinel")

package app

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Scopes are enforced here, in the services every surface calls (REST,
// MCP over HTTP, and the stdio bridge through REST), from the principal
// the bearer check put in the request's context (api.PrincipalFrom):
//
//   - admin: everything;
//   - agent: the sentinels, sessions, inboxes and follows of the sessions
//     its prefix covers (others answer their not-found code, so their
//     existence does not leak); nothing of the operator's: named tokens,
//     provider setup, parked replays, the cluster, session hooks;
//   - read: what agent sees, and no change at all (the HTTP layer also
//     refuses its non-GET requests before a handler).
//
// A context with no principal may do nothing.

// targetSession is the session a sentinel delivers to ("" for a webhook
// or MCP Events target).
func targetSession(v sentinel.View) string {
	if v.Target.Kind == sentinel.TargetSession {
		return v.Target.SessionID
	}
	return ""
}

// seesSentinel reports whether p may see the sentinel: one that delivers
// to a session it covers; a sentinel of no session only to a principal
// that covers every session.
func seesSentinel(p sentinel.Principal, v sentinel.View) bool {
	if p.CoversAll() {
		return true
	}
	s := targetSession(v)
	return s != "" && p.Covers(s)
}

// sentinelNotFound is the answer for a sentinel a principal may not see.
func sentinelNotFound(id string) error {
	return sentinel.Errorf(sentinel.CodeSentinelNotFound, "no sentinel %s", id)
}

// coverSession refuses (forbidden_scope) a session the principal does not
// act for; what says what was asked.
func coverSession(p sentinel.Principal, session, what string) error {
	if p.Covers(session) {
		return nil
	}
	return p.Refuse(what + " for session " + session + " (outside its sessions " + p.Sessions + ")")
}

// scopedSentinels is the sentinel service as a principal may use it.
type scopedSentinels struct{ next watchAPI }

var (
	_ api.Sentinels = scopedSentinels{}
	_ api.DryRunner = scopedSentinels{}
)

// target is the session a watch request delivers to.
func target(req sentinel.WatchRequest, caller string) string {
	if req.SessionID != "" {
		return req.SessionID
	}
	return caller
}

func (s scopedSentinels) Watch(ctx context.Context, req sentinel.WatchRequest, caller string) (sentinel.View, error) {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite("create sentinels"); err != nil {
		return sentinel.View{}, err
	}
	if err := s.callerCovered(p, caller); err != nil {
		return sentinel.View{}, err
	}
	if t := target(req, caller); t != "" {
		if err := coverSession(p, t, "watch"); err != nil {
			return sentinel.View{}, err
		}
	}
	return s.next.Watch(ctx, req, caller)
}

// callerCovered refuses a caller session (the MCP caller identity, a
// claim of the client) the principal does not act for.
func (scopedSentinels) callerCovered(p sentinel.Principal, caller string) error {
	if caller == "" {
		return nil
	}
	return coverSession(p, caller, "act as the caller")
}

func (s scopedSentinels) DryRun(ctx context.Context, req sentinel.WatchRequest, caller string) (api.DryRun, error) {
	p := api.PrincipalFrom(ctx)
	if p.Scope == "" {
		return api.DryRun{}, p.Refuse("dry-run watches")
	}
	if err := s.callerCovered(p, caller); err != nil {
		return api.DryRun{}, err
	}
	if t := target(req, caller); t != "" {
		if err := coverSession(p, t, "dry-run a watch"); err != nil {
			return api.DryRun{}, err
		}
	}
	return s.next.DryRun(ctx, req, caller)
}

func (s scopedSentinels) List(ctx context.Context) ([]sentinel.View, error) {
	p := api.PrincipalFrom(ctx)
	if p.Scope == "" {
		return nil, p.Refuse("list sentinels")
	}
	vs, err := s.next.List(ctx)
	if err != nil || p.CoversAll() {
		return vs, err
	}
	out := vs[:0:0]
	for _, v := range vs {
		if seesSentinel(p, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

func (s scopedSentinels) ListPage(ctx context.Context, q api.SentinelQuery) (api.SentinelPage, error) {
	p := api.PrincipalFrom(ctx)
	if p.Scope == "" {
		return api.SentinelPage{}, p.Refuse("list sentinels")
	}
	page, err := s.next.ListPage(ctx, q)
	if err != nil || p.CoversAll() {
		return page, err
	}
	out := page.Sentinels[:0:0]
	for _, v := range page.Sentinels {
		if seesSentinel(p, v) {
			out = append(out, v)
		}
	}
	page.Sentinels = out
	return page, nil
}

// visible returns the sentinel when p may see it, else sentinel_not_found.
func (s scopedSentinels) visible(ctx context.Context, p sentinel.Principal, id string) (sentinel.View, error) {
	if p.Scope == "" {
		return sentinel.View{}, sentinelNotFound(id)
	}
	v, err := s.next.Get(ctx, id)
	if err != nil {
		return sentinel.View{}, err
	}
	if !seesSentinel(p, v) {
		return sentinel.View{}, sentinelNotFound(id)
	}
	return v, nil
}

func (s scopedSentinels) Get(ctx context.Context, id string) (sentinel.View, error) {
	return s.visible(ctx, api.PrincipalFrom(ctx), id)
}

func (s scopedSentinels) Remove(ctx context.Context, id string) error {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite("remove sentinels"); err != nil {
		return err
	}
	if _, err := s.visible(ctx, p, id); err != nil {
		return err
	}
	return s.next.Remove(ctx, id)
}

func (s scopedSentinels) Status(ctx context.Context, id string) (api.SentinelStatus, error) {
	if _, err := s.visible(ctx, api.PrincipalFrom(ctx), id); err != nil {
		return api.SentinelStatus{}, err
	}
	return s.next.Status(ctx, id)
}

func (s scopedSentinels) PollNow(ctx context.Context, id string) (*sentinel.View, error) {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite("poll now"); err != nil {
		return nil, err
	}
	if id == "" && !p.CoversAll() {
		return nil, p.Refuse("poll every sentinel (give the id of one of its own)")
	}
	if id != "" {
		if _, err := s.visible(ctx, p, id); err != nil {
			return nil, err
		}
	}
	return s.next.PollNow(ctx, id)
}

func (s scopedSentinels) Adapters(ctx context.Context) ([]api.Adapter, error) {
	if p := api.PrincipalFrom(ctx); p.Scope == "" {
		return nil, p.Refuse("list adapters")
	}
	return s.next.Adapters(ctx)
}

func (s scopedSentinels) Setup(ctx context.Context, slug string, fields map[string]string) (api.SetupResult, error) {
	if err := api.PrincipalFrom(ctx).NeedAdmin("set providers up (an operator setting)"); err != nil {
		return api.SetupResult{}, err
	}
	return s.next.Setup(ctx, slug, fields)
}

func (s scopedSentinels) Parked(ctx context.Context, id string, limit int) ([]sentinel.Parked, error) {
	p := api.PrincipalFrom(ctx)
	if p.CoversAll() {
		return s.next.Parked(ctx, id, limit)
	}
	if id == "" {
		return nil, p.Refuse("list every parked record (give the id of one of its own sentinels)")
	}
	if _, err := s.visible(ctx, p, id); err != nil {
		return nil, err
	}
	return s.next.Parked(ctx, id, limit)
}

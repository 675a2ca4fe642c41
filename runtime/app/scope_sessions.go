package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/mcpevents"
)

// scopedSessions is the session registry as a principal may use it
// (scope.go).
type scopedSessions struct{ next api.Sessions }

var _ api.Sessions = scopedSessions{}

func (s scopedSessions) Register(ctx context.Context, req sentinel.RegisterSession) (sentinel.Session, bool, error) {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite("register sessions"); err != nil {
		return sentinel.Session{}, false, err
	}
	if err := coverSession(p, req.ID, "register a session"); err != nil {
		return sentinel.Session{}, false, err
	}
	if req.Hooks != nil && !p.Admin() {
		return sentinel.Session{}, false, p.Refuse("register session hooks (a command hook runs on the node, a URL hook is called by it: an operator setting)")
	}
	return s.next.Register(ctx, req)
}

func (s scopedSessions) List(ctx context.Context) ([]sentinel.Session, error) {
	p := api.PrincipalFrom(ctx)
	if p.Scope == "" {
		return nil, p.Refuse("list sessions")
	}
	list, err := s.next.List(ctx)
	if err != nil || p.CoversAll() {
		return list, err
	}
	out := list[:0:0]
	for _, x := range list {
		if p.Covers(x.ID) {
			out = append(out, x)
		}
	}
	return out, nil
}

func (s scopedSessions) Get(ctx context.Context, id string) (sentinel.Session, error) {
	if err := coverSession(api.PrincipalFrom(ctx), id, "read a session"); err != nil {
		return sentinel.Session{}, err
	}
	return s.next.Get(ctx, id)
}

// writable refuses a change of session id the principal may not make.
func writable(ctx context.Context, id, what string) error {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite(what); err != nil {
		return err
	}
	return coverSession(p, id, what)
}

func (s scopedSessions) End(ctx context.Context, id, reason string) (sentinel.Session, error) {
	if err := writable(ctx, id, "end a session"); err != nil {
		return sentinel.Session{}, err
	}
	return s.next.End(ctx, id, reason)
}

func (s scopedSessions) ReportEvent(ctx context.Context, id string, ev sentinel.SessionReport) error {
	if err := writable(ctx, id, "report session events"); err != nil {
		return err
	}
	return s.next.ReportEvent(ctx, id, ev)
}

func (s scopedSessions) RecordPR(ctx context.Context, id string, pr api.RecordPR) error {
	if err := writable(ctx, id, "record PRs"); err != nil {
		return err
	}
	return s.next.RecordPR(ctx, id, pr)
}

// scopedInboxes is the inbox service as a principal may use it. A
// principal other than an admin posts as itself: inboxesAPI labels its
// messages with its name (relation "principal"), never "human".
type scopedInboxes struct{ next api.Inboxes }

var _ api.Inboxes = scopedInboxes{}

func (s scopedInboxes) Send(ctx context.Context, to string, req sentinel.SendMessage, caller string) (sentinel.Message, error) {
	if err := writable(ctx, to, "send messages"); err != nil {
		return sentinel.Message{}, err
	}
	if caller != "" {
		if err := coverSession(api.PrincipalFrom(ctx), caller, "send as the caller"); err != nil {
			return sentinel.Message{}, err
		}
	}
	return s.next.Send(ctx, to, req, caller)
}

// readable checks a read of an inbox; a principal that may change nothing
// never moves a read cursor (ack is dropped).
func readable(ctx context.Context, q *sentinel.InboxQuery) error {
	p := api.PrincipalFrom(ctx)
	if err := coverSession(p, q.SessionID, "read an inbox"); err != nil {
		return err
	}
	if !p.Writes() {
		q.Ack = false
	}
	return nil
}

func (s scopedInboxes) Read(ctx context.Context, q sentinel.InboxQuery) (api.InboxPage, error) {
	if err := readable(ctx, &q); err != nil {
		return api.InboxPage{}, err
	}
	return s.next.Read(ctx, q)
}

func (s scopedInboxes) Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) (api.InboxPage, error) {
	if err := readable(ctx, &q); err != nil {
		return api.InboxPage{}, err
	}
	return s.next.Wait(ctx, q, timeout)
}

func (s scopedInboxes) Done() <-chan struct{} { return s.next.Done() }

// scopedFollows is the follow service as a principal may use it: a
// principal covering some sessions only follows sessions it names, for a
// follower it covers.
type scopedFollows struct{ next api.Follows }

var _ api.Follows = scopedFollows{}

func (s scopedFollows) Upsert(ctx context.Context, req sentinel.FollowRequest, caller string) (sentinel.Follow, bool, error) {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite("follow sessions"); err != nil {
		return sentinel.Follow{}, false, err
	}
	if caller != "" {
		if err := coverSession(p, caller, "follow as the caller"); err != nil {
			return sentinel.Follow{}, false, err
		}
	}
	follower := req.Follower
	if follower == "" {
		follower = caller
	}
	if follower != "" {
		if err := coverSession(p, follower, "follow"); err != nil {
			return sentinel.Follow{}, false, err
		}
	}
	if !p.CoversAll() {
		if req.Selector.All || req.Selector.CwdPrefix != "" {
			return sentinel.Follow{}, false, p.Refuse("follow every session or a folder's (selector all, cwdPrefix): name its own sessions in sessionIds")
		}
		for _, id := range req.Selector.SessionIDs {
			if err := coverSession(p, id, "follow"); err != nil {
				return sentinel.Follow{}, false, err
			}
		}
	}
	return s.next.Upsert(ctx, req, caller)
}

func (s scopedFollows) List(ctx context.Context, follower string) ([]sentinel.Follow, error) {
	p := api.PrincipalFrom(ctx)
	if p.Scope == "" {
		return nil, p.Refuse("list follows")
	}
	if follower != "" {
		if err := coverSession(p, follower, "list follows"); err != nil {
			return nil, err
		}
	}
	list, err := s.next.List(ctx, follower)
	if err != nil || p.CoversAll() {
		return list, err
	}
	out := list[:0:0]
	for _, f := range list {
		if p.Covers(f.Follower) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s scopedFollows) Remove(ctx context.Context, idOrKey string) (string, error) {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedWrite("remove follows"); err != nil {
		return "", err
	}
	if !p.CoversAll() {
		list, err := s.next.List(ctx, "")
		if err != nil {
			return "", err
		}
		own := false
		for _, f := range list {
			if (f.ID == idOrKey || (f.Key != "" && f.Key == idOrKey)) && p.Covers(f.Follower) {
				own = true
				break
			}
		}
		if !own {
			return "", sentinel.Errorf(sentinel.CodeFollowNotFound, "no follow %s", idOrKey)
		}
	}
	return s.next.Remove(ctx, idOrKey)
}

// scopedExplainer is the decision journal as a principal may use it: the
// decisions about sentinels it sees; replays are the operator's.
type scopedExplainer struct {
	next      api.Explainer
	sentinels scopedSentinels
}

var _ api.Explainer = scopedExplainer{}

func (j scopedExplainer) Decisions(ctx context.Context, sentinelID string, limit int, after uint64) (sentinel.DecisionPage, error) {
	p := api.PrincipalFrom(ctx)
	if !p.CoversAll() {
		if _, err := j.sentinels.visible(ctx, p, sentinelID); err != nil {
			return sentinel.DecisionPage{}, err
		}
	}
	return j.next.Decisions(ctx, sentinelID, limit, after)
}

func (j scopedExplainer) Event(ctx context.Context, eventID string) (api.EventStory, error) {
	p := api.PrincipalFrom(ctx)
	if p.Scope == "" {
		return api.EventStory{}, p.Refuse("read event stories")
	}
	story, err := j.next.Event(ctx, eventID)
	if err != nil || p.CoversAll() {
		return story, err
	}
	kept := story.Decisions[:0:0]
	for _, d := range story.Decisions {
		if d.Session != "" && p.Covers(d.Session) {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		return api.EventStory{}, sentinel.Errorf(sentinel.CodeEventNotFound, "no decision about event %s", eventID)
	}
	story.Decisions = kept
	return story, nil
}

func (j scopedExplainer) Replay(ctx context.Context, parkID string, force bool) (api.Replay, error) {
	if err := api.PrincipalFrom(ctx).NeedAdmin("replay parked events (an operator's action)"); err != nil {
		return api.Replay{}, err
	}
	return j.next.Replay(ctx, parkID, force)
}

// scopedCluster is the cluster view (admin and read) and the removal of
// a node (admin).
type scopedCluster struct{ next api.Cluster }

var _ api.Cluster = scopedCluster{}

func (c scopedCluster) View(ctx context.Context) (api.ClusterView, error) {
	if p := api.PrincipalFrom(ctx); !p.Admin() && p.Scope != sentinel.ScopeRead {
		return api.ClusterView{}, p.Refuse("read the cluster's state")
	}
	return c.next.View(ctx)
}

func (c scopedCluster) Remove(ctx context.Context, req api.ClusterRemove) (api.ClusterRemoved, error) {
	if err := api.PrincipalFrom(ctx).NeedAdmin("remove nodes"); err != nil {
		return api.ClusterRemoved{}, err
	}
	return c.next.Remove(ctx, req)
}

// scopedMCPEvents is the MCP Events service as a principal may use it: the
// catalogue for any, subscriptions (which create state: records,
// sentinels, feeds) for a principal that may change things. Each
// principal's subscriptions and cursors are its own (the principal id
// binds them).
type scopedMCPEvents struct{ next mcpevents.Service }

var _ mcpevents.Service = scopedMCPEvents{}

func (e scopedMCPEvents) List(ctx context.Context, params json.RawMessage) (any, error) {
	return e.next.List(ctx, params)
}

func (e scopedMCPEvents) Poll(ctx context.Context, principal string, params json.RawMessage) (any, error) {
	if err := mcpEventsWrite(ctx, "poll event subscriptions"); err != nil {
		return nil, err
	}
	return e.next.Poll(ctx, principal, params)
}

func (e scopedMCPEvents) Stream(ctx context.Context, principal string, params json.RawMessage, notify func(method string, params any) error) error {
	if err := mcpEventsWrite(ctx, "stream event subscriptions"); err != nil {
		return err
	}
	return e.next.Stream(ctx, principal, params, notify)
}

func (e scopedMCPEvents) Subscribe(ctx context.Context, principal string, params json.RawMessage) (any, error) {
	if err := mcpEventsWrite(ctx, "subscribe to events"); err != nil {
		return nil, err
	}
	return e.next.Subscribe(ctx, principal, params)
}

func (e scopedMCPEvents) Unsubscribe(ctx context.Context, principal string, params json.RawMessage) (any, error) {
	if err := mcpEventsWrite(ctx, "unsubscribe"); err != nil {
		return nil, err
	}
	return e.next.Unsubscribe(ctx, principal, params)
}

// mcpEventsWrite refuses, as the SEP's Forbidden, a principal that may
// change nothing.
func mcpEventsWrite(ctx context.Context, what string) error {
	p := api.PrincipalFrom(ctx)
	if p.Writes() {
		return nil
	}
	return sentinel.Errorf(sentinel.CodeForbidden, "the token %q (scope %s) may not %s", p.Name, p.Scope, what)
}

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// convert copies between the runtime records and the wire DTOs, which
// share their JSON shape.
func convert[T any](v any) (T, error) {
	var out T
	raw, err := json.Marshal(v)
	if err != nil {
		return out, fmt.Errorf("convert %T: %w", v, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("convert %T: %w", v, err)
	}
	return out, nil
}

// sessionView is the wire view of a session record, its hooks redacted.
func sessionView(rec sessions.Session) (api.Session, error) {
	v, err := convert[api.Session](rec)
	return v.RedactHooks(), err
}

// sessionsAPI adapts the registry to api.Sessions.
type sessionsAPI struct{ reg *sessions.Registry }

func (s sessionsAPI) Register(ctx context.Context, req api.RegisterSession) (api.Session, bool, error) {
	in := sessions.RegisterInput{ID: req.ID, Label: req.Label, Cwd: req.Cwd, ParentSessionID: req.ParentSessionID,
		HeartbeatTTLMs: req.HeartbeatTTLMs, Sentinel: req.Sentinel}
	if req.Hooks != nil {
		h, err := convert[sessions.Hooks](req.Hooks)
		if err != nil {
			return api.Session{}, false, err
		}
		in.Hooks = &h
	}
	rec, created, err := s.reg.Register(ctx, in)
	if err != nil {
		return api.Session{}, false, err
	}
	v, err := sessionView(rec.Effective(s.reg.Now()))
	return v, created, err
}

func (s sessionsAPI) List(ctx context.Context) ([]api.Session, error) {
	recs, err := s.reg.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Session, 0, len(recs))
	for _, rec := range recs {
		v, err := sessionView(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (s sessionsAPI) Get(ctx context.Context, id string) (api.Session, error) {
	rec, err := s.reg.Get(ctx, id)
	if err != nil {
		return api.Session{}, err
	}
	return sessionView(rec)
}

func (s sessionsAPI) End(ctx context.Context, id, reason string) (api.Session, error) {
	rec, err := s.reg.End(ctx, id, reason)
	if err != nil {
		return api.Session{}, err
	}
	return sessionView(rec)
}

func (s sessionsAPI) ReportEvent(ctx context.Context, id string, ev api.SessionEvent) error {
	return s.reg.Report(ctx, id, sessions.ReportInput{Kind: ev.Kind, AwaitingInput: ev.AwaitingInput, Empty: ev.Empty, Excerpt: ev.Excerpt, Reason: ev.Reason})
}

func (s sessionsAPI) RecordPR(ctx context.Context, id string, pr api.RecordPR) error {
	return s.reg.RecordPR(ctx, id, pr.URL, pr.State, pr.Title)
}

// inboxesAPI adapts the inbox service to api.Inboxes.
type inboxesAPI struct{ svc *sessions.Inboxes }

func (s inboxesAPI) Send(ctx context.Context, to string, req api.SendMessage, caller string) (api.Message, error) {
	in := sessions.SendInput{Text: req.Text, Kind: req.Kind, Urgency: req.Urgency,
		CorrelationID: req.CorrelationID, ReplyTo: req.ReplyTo, Data: req.Data}
	if p := api.PrincipalFrom(ctx); !p.Admin() {
		in.Principal = p.Name // never "human": a named token posts as itself
	}
	msg, err := s.svc.Send(ctx, to, in, caller)
	if err != nil {
		return api.Message{}, err
	}
	return convert[api.Message](msg)
}

func (s inboxesAPI) query(q api.InboxQuery) sessions.Query {
	return sessions.Query{SessionID: q.SessionID, After: q.After, Limit: q.Limit, CorrelationID: q.CorrelationID, Ack: q.Ack, Cursor: q.Cursor}
}

func (s inboxesAPI) page(msgs []inbox.Message, next uint64) (api.InboxPage, error) {
	out, err := convert[[]api.Message](msgs)
	if err != nil {
		return api.InboxPage{}, err
	}
	if out == nil {
		out = []api.Message{}
	}
	return api.InboxPage{Messages: out, Next: next}, nil
}

func (s inboxesAPI) Read(ctx context.Context, q api.InboxQuery) (api.InboxPage, error) {
	msgs, next, err := s.svc.Read(ctx, s.query(q))
	if err != nil {
		return api.InboxPage{}, err
	}
	return s.page(msgs, next)
}

func (s inboxesAPI) Wait(ctx context.Context, q api.InboxQuery, timeout time.Duration) (api.InboxPage, error) {
	if timeout < api.MinWait || timeout > api.MaxWait {
		return api.InboxPage{}, sentinel.Errorf(sentinel.CodeInvalidInput, "wait must be within 1s..49s")
	}
	msgs, next, err := s.svc.Wait(ctx, s.query(q), timeout)
	if err != nil {
		return api.InboxPage{}, err
	}
	p, err := s.page(msgs, next)
	p.TimedOut = len(msgs) == 0
	return p, err
}

func (s inboxesAPI) Done() <-chan struct{} { return s.svc.Done() }

// followsAPI adapts the follow engine to api.Follows.
type followsAPI struct{ engine *follow.Engine }

func (s followsAPI) Upsert(ctx context.Context, req api.FollowRequest, caller string) (api.Follow, bool, error) {
	in, err := convert[follow.Request](req)
	if err != nil {
		return api.Follow{}, false, err
	}
	f, created, err := s.engine.Upsert(ctx, in, caller)
	if err != nil {
		return api.Follow{}, false, err
	}
	v, err := convert[api.Follow](f)
	return v, created, err
}

func (s followsAPI) List(ctx context.Context, follower string) ([]api.Follow, error) {
	fs, err := s.engine.Store().List(ctx, follower)
	if err != nil {
		return nil, err
	}
	return convert[[]api.Follow](fs)
}

func (s followsAPI) Remove(ctx context.Context, idOrKey string) (string, error) {
	return s.engine.Store().Remove(ctx, idOrKey)
}

var (
	_ api.Sessions = sessionsAPI{}
	_ api.Inboxes  = inboxesAPI{}
	_ api.Follows  = followsAPI{}
)

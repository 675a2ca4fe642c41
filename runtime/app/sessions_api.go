package app

import (
	"context"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// sessionView is the wire view of a session record, its hooks redacted.
func sessionView(rec sessions.Session) sentinel.Session {
	return rec.Session.RedactHooks()
}

// sessionsAPI adapts the registry to api.Sessions.
type sessionsAPI struct{ reg *sessions.Registry }

func (s sessionsAPI) Register(ctx context.Context, req sentinel.RegisterSession) (sentinel.Session, bool, error) {
	rec, created, err := s.reg.Register(ctx, req)
	if err != nil {
		return sentinel.Session{}, false, err
	}
	return sessionView(rec.Effective(s.reg.Now())), created, nil
}

func (s sessionsAPI) List(ctx context.Context) ([]sentinel.Session, error) {
	recs, err := s.reg.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sentinel.Session, 0, len(recs))
	for _, rec := range recs {
		out = append(out, sessionView(rec))
	}
	return out, nil
}

func (s sessionsAPI) Get(ctx context.Context, id string) (sentinel.Session, error) {
	rec, err := s.reg.Get(ctx, id)
	if err != nil {
		return sentinel.Session{}, err
	}
	return sessionView(rec), nil
}

func (s sessionsAPI) End(ctx context.Context, id, reason string) (sentinel.Session, error) {
	rec, err := s.reg.End(ctx, id, reason)
	if err != nil {
		return sentinel.Session{}, err
	}
	return sessionView(rec), nil
}

func (s sessionsAPI) ReportEvent(ctx context.Context, id string, ev sentinel.SessionReport) error {
	return s.reg.Report(ctx, id, ev)
}

func (s sessionsAPI) RecordPR(ctx context.Context, id string, pr api.RecordPR) error {
	return s.reg.RecordPR(ctx, id, pr.URL, pr.State, pr.Title)
}

// inboxesAPI adapts the inbox service to api.Inboxes.
type inboxesAPI struct{ svc *sessions.Inboxes }

func (s inboxesAPI) Send(ctx context.Context, to string, req sentinel.SendMessage, caller string) (sentinel.Message, error) {
	from := sessions.Sender{Session: caller}
	if p := api.PrincipalFrom(ctx); !p.Admin() {
		from.Principal = p.Name // never "human": a named token posts as itself
	}
	msg, err := s.svc.Send(ctx, to, req, from)
	if err != nil {
		return sentinel.Message{}, err
	}
	return msg, nil
}

// page answers a read: an empty read has an empty list, never null.
func (s inboxesAPI) page(msgs []sentinel.Message, next uint64) api.InboxPage {
	if msgs == nil {
		msgs = []sentinel.Message{}
	}
	return api.InboxPage{Messages: msgs, Next: next}
}

func (s inboxesAPI) Read(ctx context.Context, q sentinel.InboxQuery) (api.InboxPage, error) {
	msgs, next, err := s.svc.Read(ctx, q)
	if err != nil {
		return api.InboxPage{}, err
	}
	return s.page(msgs, next), nil
}

func (s inboxesAPI) Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) (api.InboxPage, error) {
	if timeout < api.MinWait || timeout > api.MaxWait {
		return api.InboxPage{}, sentinel.Errorf(sentinel.CodeInvalidInput, "wait must be within 1s..49s")
	}
	msgs, next, err := s.svc.Wait(ctx, q, timeout)
	if err != nil {
		return api.InboxPage{}, err
	}
	p := s.page(msgs, next)
	p.TimedOut = len(msgs) == 0
	return p, nil
}

func (s inboxesAPI) Done() <-chan struct{} { return s.svc.Done() }

// followsAPI adapts the follow engine to api.Follows.
type followsAPI struct{ engine *follow.Engine }

func (s followsAPI) Upsert(ctx context.Context, req sentinel.FollowRequest, caller string) (sentinel.Follow, bool, error) {
	return s.engine.Upsert(ctx, req, caller)
}

func (s followsAPI) List(ctx context.Context, follower string) ([]sentinel.Follow, error) {
	return s.engine.Store().List(ctx, follower)
}

func (s followsAPI) Remove(ctx context.Context, idOrKey string) (string, error) {
	return s.engine.Store().Remove(ctx, idOrKey)
}

var (
	_ api.Sessions = sessionsAPI{}
	_ api.Inboxes  = inboxesAPI{}
	_ api.Follows  = followsAPI{}
)

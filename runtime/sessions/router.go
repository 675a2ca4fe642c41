package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/park"
)

// AppendFunc stores a message in an inbox; session_not_alive from it means
// the recipient rejected the delivery.
type AppendFunc func(ctx context.Context, msg sentinel.Message) (sentinel.Message, bool, error)

// Router is the dead-target deliver.Router (AIP-60 sentinel delivery): it
// resolves the target session (successor, parent forward as fyi, resume
// and retarget, park) and parks and orphans what cannot be delivered. The
// provider-side watch is never touched. Build it with NewRouter.
type Router struct {
	resolver *Resolver
	appendFn AppendFunc
	// inbox, when set, reads what is already stored so one event shows
	// once per session (inbox.AppendEvent); nil appends as is.
	inbox  *inbox.Inbox
	parked *park.Store
	log    *slog.Logger
	now    func() time.Time
	// merged is called after an auto-linked sentinel delivered a merged
	// pull_request.closed event (the follow event pr-merged).
	merged func(ctx context.Context, sessionID, prURL string)
}

// RouterOption adjusts a Router built by NewRouter.
type RouterOption func(*Router)

// WithRouterInbox reads what ib already stores so one event shows once per
// session (inbox.AppendEvent); without it events are appended as they are.
func WithRouterInbox(ib *inbox.Inbox) RouterOption { return func(r *Router) { r.inbox = ib } }

// WithRouterLogger logs the router's failures to l (discarded by
// default).
func WithRouterLogger(l *slog.Logger) RouterOption { return func(r *Router) { r.log = l } }

// WithRouterClock reads the time from now (time.Now by default).
func WithRouterClock(now func() time.Time) RouterOption { return func(r *Router) { r.now = now } }

// WithMerged calls merged after an auto-linked sentinel delivered a
// merged pull_request.closed event (the follow event pr-merged).
func WithMerged(merged func(ctx context.Context, sessionID, prURL string)) RouterOption {
	return func(r *Router) { r.merged = merged }
}

// NewRouter builds the router that resolves each target session with
// resolver, stores messages with appendFn and parks what cannot be
// delivered in parked.
func NewRouter(resolver *Resolver, appendFn AppendFunc, parked *park.Store, opts ...RouterOption) *Router {
	r := &Router{resolver: resolver, appendFn: appendFn, parked: parked}
	for _, o := range opts {
		o(r)
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// Route implements deliver.Router.
func (r *Router) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	t := rec.Spec.Target
	msg := inbox.SentinelMessage(rec.ID, rec.Provider, t.SessionID, t.Urgency, ev, sentinel.FormatTime(r.now()))
	res, err := r.resolver.Resolve(ctx, t.SessionID, true)
	if err != nil {
		return deliver.Outcome{}, err
	}
	switch res.Action {
	case Park:
		return r.park(ctx, rec, ev, res.Reason)
	case Forward:
		fwd := msg
		fwd.ID = inbox.DeterministicID("sentinel-forward", t.SessionID, res.To, ev.ID)
		fwd.To = res.To
		fwd.Urgency = sentinel.UrgencyFYI
		fwd.Text = "[for closed session " + t.SessionID + "] " + msg.Text
		return r.appendEvent(ctx, fwd, ev.ID)
	}
	if res.To != msg.To {
		msg.To = res.To
		msg.ID = inbox.EventMessageID(res.To, ev.ID, "")
	}
	out, err := r.appendEvent(ctx, msg, ev.ID)
	if isNotAlive(err) {
		return r.park(ctx, rec, ev, fmt.Sprintf("session %s reported alive but rejected the delivery: %v", res.To, err))
	}
	if err != nil {
		return deliver.Outcome{}, err
	}
	if res.To != t.SessionID {
		out.RetargetTo = res.To
	}
	r.mergedHook(ctx, rec.Spec.Label, rec.Spec.Group, ev, res.To)
	return out, nil
}

// Plan implements deliver.Planner: the direct path is taken when the
// target session is alive or unregistered (Resolve would deliver to it as
// it is, with no hook).
func (r *Router) Plan(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	s, err := r.resolver.registry.Lookup(ctx, rec.Spec.Target.SessionID)
	if err != nil {
		return nil, err
	}
	if !takesAsIs(s, r.resolver.registry.Now()) {
		return nil, nil
	}
	return r.Prepare(rec, ev)
}

// Prepare implements deliver.Planner: the Send stores the event's message
// in the target session's inbox (idempotent: the inbox refuses a second
// copy) and raises pr-merged, as Route does; a recipient that rejects the
// delivery parks the event and orphans the sentinel, as Route does. The
// Send reads nothing of rec (the pipeline writes it meanwhile).
func (r *Router) Prepare(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	id, label, group, t := rec.ID, rec.Spec.Label, rec.Spec.Group, rec.Spec.Target
	msg := inbox.SentinelMessage(rec.ID, rec.Provider, t.SessionID, t.Urgency, ev, sentinel.FormatTime(r.now()))
	if err := inbox.Validate(&msg); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (deliver.Outcome, error) {
		out, err := r.appendEvent(ctx, msg, ev.ID)
		if isNotAlive(err) {
			return r.parkID(ctx, id, ev, fmt.Sprintf("session %s reported alive but rejected the delivery: %v", t.SessionID, err))
		}
		if err != nil {
			return deliver.Outcome{}, err
		}
		r.mergedHook(ctx, label, group, ev, t.SessionID)
		return out, nil
	}, nil
}

// appendEvent stores one sentinel's message for event eventID, at most
// once per (session, event) when the router reads the inbox
// (inbox.AppendEvent: a second sentinel of the session merges into the
// first's message, or escalates it).
func (r *Router) appendEvent(ctx context.Context, msg sentinel.Message, eventID string) (deliver.Outcome, error) {
	if r.inbox == nil {
		stored, dup, err := r.appendFn(ctx, msg)
		if err != nil {
			return deliver.Outcome{}, err
		}
		return deliver.Outcome{Duplicate: dup, Message: &stored}, nil
	}
	ea, err := r.inbox.AppendEvent(ctx, inbox.AppendFunc(r.appendFn), msg, eventID)
	if err != nil {
		return deliver.Outcome{}, err
	}
	return deliver.EventOutcome(ea), nil
}

func (r *Router) park(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event, reason string) (deliver.Outcome, error) {
	return r.parkID(ctx, rec.ID, ev, reason)
}

func (r *Router) parkID(ctx context.Context, id string, ev *sentinel.Event, reason string) (deliver.Outcome, error) {
	if err := r.parked.Park(ctx, id, sentinel.Parked{SentinelID: id, Event: ev, Reason: reason}, "dead:"+id+":"+ev.ID); err != nil {
		return deliver.Outcome{}, err
	}
	r.log.Info("sentinel event parked", "sentinel", id, "event", ev.ID, "reason", reason)
	return deliver.Outcome{Parked: true, Orphaned: true, Reason: reason}, nil
}

func isNotAlive(err error) bool {
	var de *sentinel.Error
	return errors.As(err, &de) && de.Code == sentinel.CodeSessionNotAlive
}

// AutoLinkLabelPrefix prefixes the label of an auto-linked sentinel.
const AutoLinkLabelPrefix = "auto:pr#"

// mergedHook raises pr-merged for the owning session when an auto-linked
// sentinel delivers its PR's merged closed event.
func (r *Router) mergedHook(ctx context.Context, label, group string, ev *sentinel.Event, to string) {
	if r.merged == nil || !strings.HasPrefix(label, AutoLinkLabelPrefix) || ev.Type != "github.pull_request.closed" || !ev.Terminal {
		return
	}
	var data struct {
		Merged bool `json:"merged"`
	}
	if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &data) != nil || !data.Merged {
		return
	}
	ref, err := sentinel.ParseGitHubSubject(ev.Subject)
	if err != nil || ref.Number == 0 {
		return
	}
	owner := group
	if owner == "" {
		owner = to
	}
	r.merged(ctx, owner, fmt.Sprintf("https://github.com/%s/pull/%d", ref.FullName(), ref.Number))
}

var _ deliver.Planner = (*Router)(nil)

package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/pause"
)

// Action is what to do with a message for a possibly dead session.
type Action int

// Actions.
const (
	// Deliver to Resolution.To (the target, its successor or its resumed
	// id).
	Deliver Action = iota + 1
	// Forward to the live parent Resolution.To as fyi.
	Forward
	// Park with Resolution.Reason.
	Park
)

// Resolution is the routing decision for one target session.
type Resolution struct {
	Action Action
	To     string
	Reason string
}

// maxHops bounds continuedTo chains and parent walks.
const maxHops = 32

// Resolver decides where a message for a session goes (AIP-60 sentinel
// delivery over the AIP-46 inbox). An unknown session receives normally,
// and so does a live one. A forgotten session parks. A retired one hands
// over to its successor chain, else (when allowed) to its live parent,
// else parks. Any other dead session is resumed through its resume hook
// (one resume at a time per session) and receives under its live id, else
// parks.
//
// A resume hook runs inside the caller's deadline (the delivery's handle
// timeout) minus a margin, whatever the hook's own timeout: the margin is
// left to park or deliver the event once the hook has answered or been
// stopped.
//
// In a cluster (NewHomes attached), a command resume hook of a session that lives
// on another node runs there: the resolver asks the home node (a request
// bounded by the same deadline) and routes by its answer. When the home
// node does not answer, Resolve fails, so the delivery is retried later
// (never acknowledged, never lost); a URL hook runs here.
//
// Build it with NewResolver.
type Resolver struct {
	registry *Registry
	runner   *HookRunner
	log      *slog.Logger
	// homes, when set (NewHomes), runs command resume hooks on the
	// session's home node.
	homes *Homes
	// clusterLocks, when set (a cluster), serializes the resumes run on
	// this node with those run on every other node (URL hooks run
	// wherever the event is): one resume hook of a session at a time in
	// the cluster.
	clusterLocks Locks
	// pause holds the resolver's named pause points (tests; nil in
	// production): PointResumed.
	pause *pause.Points

	// mu guards locks; it is never held while a session lock is awaited.
	mu    sync.Mutex
	locks map[string]*sessionLock
}

// ResolverOption adjusts a Resolver built by NewResolver.
type ResolverOption func(*Resolver)

// WithResolverLogger logs the resolver's failures to l (discarded by
// default).
func WithResolverLogger(l *slog.Logger) ResolverOption { return func(r *Resolver) { r.log = l } }

// WithResolverLocks serializes the resumes of a session across the nodes
// of a cluster with locks (bus.Locker): one resume hook of a session at a
// time in the cluster. Without it resumes are serialized on this node.
func WithResolverLocks(locks Locks) ResolverOption {
	return func(r *Resolver) { r.clusterLocks = locks }
}

// WithResolverPause holds the resolver at its named pause points (tests):
// PointResumed.
func WithResolverPause(p *pause.Points) ResolverOption { return func(r *Resolver) { r.pause = p } }

// NewResolver builds the resolver of reg's sessions, running their resume
// hooks with runner.
func NewResolver(reg *Registry, runner *HookRunner, opts ...ResolverOption) *Resolver {
	r := &Resolver{registry: reg, runner: runner}
	for _, o := range opts {
		o(r)
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Locks hands out named locks that hold across nodes (bus.Locker).
type Locks interface {
	Lock(ctx context.Context, name string) (func(), error)
}

// PointResumed is reached (key: the session id) after a resume hook
// answered with a new id and before the successor link is written.
const PointResumed pause.Point = "sessions.resumed"

// sessionLock serializes the resumes of one session; refs counts the
// callers holding or awaiting it, so an unused entry is dropped.
type sessionLock struct {
	mu   sync.Mutex
	refs int
}

// lock takes the resume lock of a session and returns its release. The
// entry lives only while some caller holds or awaits it.
func (r *Resolver) lock(id string) func() {
	r.mu.Lock()
	if r.locks == nil {
		r.locks = map[string]*sessionLock{}
	}
	l, ok := r.locks[id]
	if !ok {
		l = &sessionLock{}
		r.locks[id] = l
	}
	l.refs++
	r.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		r.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(r.locks, id)
		}
		r.mu.Unlock()
	}
}

// maxHookMargin caps the time hookContext keeps back from a resume hook.
const maxHookMargin = 5 * time.Second

// hookContext bounds a resume hook to ctx's deadline minus a margin (a
// quarter of the time left, at most maxHookMargin), so that the caller
// still has time to park or deliver when the hook is stopped. Without a
// deadline, the hook's own timeout is the only bound.
func hookContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := time.Until(deadline) / 4
	if margin > maxHookMargin {
		margin = maxHookMargin
	}
	return context.WithDeadlineCause(ctx, deadline.Add(-margin),
		errors.New("resume hook stopped: it ran out of the delivery's time (delivery.handle_timeout)"))
}

// Resolve decides the route of a message for id. forwardToParent allows
// the parent-forward branch (sentinel events; never follow digests). An
// error means the registry could not be read: retry later.
func (r *Resolver) Resolve(ctx context.Context, id string, forwardToParent bool) (Resolution, error) {
	s, err := r.registry.Lookup(ctx, id)
	if err != nil {
		return Resolution{}, err
	}
	switch {
	case takesAsIs(s, r.registry.Now()):
		return Resolution{Action: Deliver, To: id}, nil
	case s.Forgotten:
		return Resolution{Action: Park, Reason: fmt.Sprintf("target session %s no longer exists", id)}, nil
	case s.Retired():
		return r.retired(ctx, s, forwardToParent)
	}
	return r.resume(ctx, id)
}

// takesAsIs reports whether a target session takes its events as it is,
// with nothing to decide: unregistered, or registered, not forgotten and
// alive. Resolve delivers to it; the router's direct path (Plan) is taken
// for it.
func takesAsIs(s *Session, now time.Time) bool {
	return s == nil || !s.Forgotten && s.Alive(now)
}

func (r *Resolver) retired(ctx context.Context, s *Session, forwardToParent bool) (Resolution, error) {
	if s.ContinuedTo != "" {
		succ, err := r.successor(ctx, s)
		if err != nil {
			return Resolution{}, err
		}
		now := r.registry.Now()
		switch {
		case succ == nil:
			return Resolution{Action: Park, Reason: fmt.Sprintf("session %s was superseded by %s, which no longer exists", s.ID, s.ContinuedTo)}, nil
		case succ.Alive(now):
			return Resolution{Action: Deliver, To: succ.ID}, nil
		case !succ.Retired():
			res, err := r.resume(ctx, succ.ID)
			if err == nil && res.Action == Park {
				res.Reason = fmt.Sprintf("session %s was superseded by %s, which is not alive: %s", s.ID, succ.ID, res.Reason)
			}
			return res, err
		}
		return Resolution{Action: Park, Reason: fmt.Sprintf("session %s was superseded by %s, which is not alive", s.ID, succ.ID)}, nil
	}
	why := "retired"
	if Deliberate(s.EndedReason) {
		why = "closed on purpose (" + s.EndedReason + ")"
	}
	if forwardToParent && s.ParentSessionID != "" {
		p, err := r.registry.Lookup(ctx, s.ParentSessionID)
		if err != nil {
			return Resolution{}, err
		}
		if p != nil && p.Alive(r.registry.Now()) {
			return Resolution{Action: Forward, To: p.ID}, nil
		}
		return Resolution{Action: Park, Reason: fmt.Sprintf("session %s was %s and its parent %s is not alive; not resuming", s.ID, why, s.ParentSessionID)}, nil
	}
	return Resolution{Action: Park, Reason: fmt.Sprintf("session %s was %s; not resuming", s.ID, why)}, nil
}

// successor follows continuedTo transitively (cycle guard, at most maxHops)
// and returns the last row that still exists, nil when none does.
func (r *Resolver) successor(ctx context.Context, s *Session) (*Session, error) {
	seen := map[string]bool{s.ID: true}
	var last *Session
	cur := s
	for hop := 0; hop < maxHops && cur.ContinuedTo != "" && !seen[cur.ContinuedTo]; hop++ {
		seen[cur.ContinuedTo] = true
		next, err := r.registry.Lookup(ctx, cur.ContinuedTo)
		if err != nil {
			return nil, err
		}
		if next == nil || next.Forgotten {
			break
		}
		last, cur = next, next
	}
	return last, nil
}

// resume revives a dead, non-retired session through its resume hook.
// Concurrent resumes of one session share one run: a second caller finds
// it alive (or continued) after the first.
func (r *Resolver) resume(ctx context.Context, id string) (Resolution, error) {
	return r.resumeOn(ctx, id, false)
}

// resumeOn is resume; here is set when another node asked this one (the
// session's home) to resume it: the hook then never travels again, and a
// home that moved meanwhile is an error the asking node retries.
func (r *Resolver) resumeOn(ctx context.Context, id string, here bool) (Resolution, error) {
	unlock := r.lock(id)
	defer unlock()
	s, err := r.registry.Lookup(ctx, id)
	if err != nil {
		return Resolution{}, err
	}
	if s == nil {
		return Resolution{Action: Deliver, To: id}, nil
	}
	if s.Alive(r.registry.Now()) {
		return Resolution{Action: Deliver, To: id}, nil
	}
	if s.ContinuedTo != "" {
		return r.retired(ctx, s, false)
	}
	reason := firstNonEmpty(s.Effective(r.registry.Now()).EndedReason, "ended")
	if s.Hooks == nil || s.Hooks.Resume == nil {
		return Resolution{Action: Park, Reason: fmt.Sprintf("session %s ended (%s) and has no resume hook", id, reason)}, nil
	}
	if home, remote := r.homes.remoteHome(s, s.Hooks.Resume); remote {
		if here {
			return Resolution{}, fmt.Errorf("resume session %s: its home moved to node %s: %w", id, home, errHomeMoved)
		}
		hctx, cancel := hookContext(ctx)
		defer cancel()
		return r.homes.resume(hctx, home, id)
	}
	if r.clusterLocks != nil {
		// Another node may be resuming it (a URL hook runs where the event
		// is): one resume at a time, then the state as it is after it.
		release, err := r.clusterLocks.Lock(ctx, "resume."+id)
		if err != nil {
			return Resolution{}, fmt.Errorf("resume session %s: %w", id, err)
		}
		defer release()
		if s, err = r.registry.Lookup(ctx, id); err != nil {
			return Resolution{}, err
		}
		switch {
		case s == nil || s.Alive(r.registry.Now()):
			return Resolution{Action: Deliver, To: id}, nil
		case s.ContinuedTo != "":
			return r.retired(ctx, s, false)
		}
	}
	payload, _ := json.Marshal(map[string]string{"sessionId": id, "reason": reason})
	hctx, cancel := hookContext(ctx)
	out, err := r.runner.Run(hctx, s.Hooks.Resume, map[string]string{"sessionId": id}, payload)
	cancel()
	if err != nil {
		r.log.Warn("resume hook failed", "session", id, "err", err)
		return Resolution{Action: Park, Reason: fmt.Sprintf("could not resume session %s: %v", id, err)}, nil
	}
	live := parseResumed(out, id)
	if !sentinel.ValidSessionID(live) {
		return Resolution{Action: Park, Reason: fmt.Sprintf("could not resume session %s: the resume hook returned an invalid id %q", id, live)}, nil
	}
	if live == id {
		if err := r.registry.MarkResumed(ctx, id); err != nil {
			return Resolution{}, err
		}
	} else {
		if err := r.pause.At(ctx, PointResumed, id); err != nil {
			return Resolution{}, err
		}
		to, err := r.registry.ContinueTo(ctx, id, live)
		if err != nil {
			return Resolution{}, err
		}
		if to != live {
			// Resumed twice at once (another node's hook answered first):
			// the first link stands, and this hook's session gets nothing.
			r.log.Warn("session resumed twice at once; its first successor stands", "session", id, "successor", to, "unused", live)
			s, err := r.registry.Lookup(ctx, id)
			if err != nil {
				return Resolution{}, err
			}
			return r.retired(ctx, s, false)
		}
	}
	r.log.Info("session resumed", "session", id, "live", live)
	return Resolution{Action: Deliver, To: live}, nil
}

// parseResumed reads the live id from a resume hook's output: JSON
// {"sessionId": ...}, else the first non-empty line; empty means the same
// id (revived in place).
func parseResumed(out []byte, id string) string {
	txt := strings.TrimSpace(string(out))
	if txt == "" {
		return id
	}
	if strings.HasPrefix(txt, "{") {
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal([]byte(txt), &v) == nil {
			if v.SessionID == "" {
				return id
			}
			return v.SessionID
		}
	}
	return strings.TrimSpace(strings.SplitN(txt, "\n", 2)[0])
}

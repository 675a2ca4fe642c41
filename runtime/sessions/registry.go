package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/pause"
)

// ErrNotFound is returned (wrapped) for an unknown or forgotten session.
var ErrNotFound = sentinel.Errorf(sentinel.CodeSessionNotFound, "session not found")

// Registry keeps session records in the sessions KV bucket, keyed by id.
// Updates are compare-and-set on the entry revision, retried on conflict.
// It publishes lifecycle events on the lifecycle stream.
type Registry struct {
	b   RegistryBus
	kv  jetstream.KeyValue
	now func() time.Time
	log *slog.Logger
	// node is this node's name, recorded as the home of the sessions
	// registered here (WithRegistryNode).
	node string
	// onPR is called after a PR was recorded (auto-link); set by SetPRHook.
	onPR func(ctx context.Context, s Session, pr sentinel.SessionPR, isNew bool)
	// pause holds the named pause points (tests; nil in production).
	pause *pause.Points
}

// RegistryBus is what the registry needs of the bus (*bus.Bus is one):
// the lifecycle outbox's retried publish, key listings that survive a
// node cut off from quorum (bus.ListKeys) and leader reads.
type RegistryBus interface {
	PublishRetrying(ctx context.Context, subj string, data []byte, msgID string) (seq uint64, dup bool, err error)
	ListKeys(ctx context.Context, kv jetstream.KeyValue) ([]string, error)
	// LeaderLast reads a subject's last message from its stream's leader
	// (a session this node's replica does not hold yet).
	LeaderLast(ctx context.Context, stream, subject string) ([]byte, uint64, error)
}

// RegistryOption sets one of a registry's optional settings.
type RegistryOption func(*Registry)

// WithRegistryClock reads the time from now (default time.Now).
func WithRegistryClock(now func() time.Time) RegistryOption { return func(r *Registry) { r.now = now } }

// WithRegistryLogger logs to l (default: discard).
func WithRegistryLogger(l *slog.Logger) RegistryOption { return func(r *Registry) { r.log = l } }

// WithRegistryNode names the node this registry runs on: a session
// registered through it records it as its homeNode (a later registration
// through another node moves the home there). Without it no home is
// recorded.
func WithRegistryNode(name string) RegistryOption { return func(r *Registry) { r.node = name } }

// WithRegistryPause holds the registry at its named pause points (tests):
// the lifecycle outbox's PointLifecycle.
func WithRegistryPause(p *pause.Points) RegistryOption { return func(r *Registry) { r.pause = p } }

// NewRegistry returns the registry on the sessions bucket kv
// (SessionsBucket), publishing lifecycle events through b, with opts
// applied.
func NewRegistry(b RegistryBus, kv jetstream.KeyValue, opts ...RegistryOption) *Registry {
	r := &Registry{b: b, kv: kv}
	for _, o := range opts {
		o(r)
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// SetPRHook installs the function called after a PR is recorded. It must
// be set before the registry is used. It is a setter, not an option,
// because the hook (auto-link) creates sentinels through the sentinel
// service, which is built over the registry (its session checker).
func (r *Registry) SetPRHook(fn func(ctx context.Context, s Session, pr sentinel.SessionPR, isNew bool)) {
	r.onPR = fn
}

// Now returns the registry's clock.
func (r *Registry) Now() time.Time { return r.now() }

// Lookup returns the stored record, nil when the session was never
// registered. A forgotten row comes back with Forgotten set. It reads this
// node's replica only: it is on every event's way to an inbox, where a
// session unknown here is delivered to as it is (an unregistered
// session's inbox), so a session registered through another node a moment
// ago costs no leader read per event. Get and the updates ask the leader.
func (r *Registry) Lookup(ctx context.Context, id string) (*Session, error) {
	s, _, err := r.read(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return s, err
}

// Get returns the effective view of a live or ended session
// (session_not_found when unknown or forgotten).
func (r *Registry) Get(ctx context.Context, id string) (Session, error) {
	if !sentinel.ValidSessionID(id) {
		return Session{}, fmt.Errorf("get session %q: %w", id, ErrNotFound)
	}
	s, _, err := r.get(ctx, id)
	if err != nil {
		return Session{}, err
	}
	if s.Forgotten {
		return Session{}, fmt.Errorf("get session %s: %w", id, ErrNotFound)
	}
	return s.Effective(r.now()), nil
}

// get reads a session for Get and the updates: this node's replica, then
// the bucket's leader for a session the replica does not hold.
func (r *Registry) get(ctx context.Context, id string) (*Session, uint64, error) {
	s, rev, err := r.read(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return r.getFromLeader(ctx, id)
	}
	return s, rev, err
}

// read reads a session from this node's replica.
func (r *Registry) read(ctx context.Context, id string) (*Session, uint64, error) {
	if !sentinel.ValidSessionID(id) {
		return nil, 0, fmt.Errorf("get session %q: %w", id, ErrNotFound)
	}
	e, err := r.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, fmt.Errorf("get session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("get session %s: %w", id, err)
	}
	return decodeSession(id, e.Value(), e.Revision())
}

// getFromLeader reads a session this node's replica does not hold from
// the bucket's leader: in a cluster a read may be answered by a replica
// behind the leader, and a session another node registered a moment ago
// is not unknown (a GET, or a lifecycle report, for it right after its
// registration through another node answered session_not_found). A key the leader
// does not hold either, holds deleted, or a leader that cannot be reached,
// is not found, as the replica said.
func (r *Registry) getFromLeader(ctx context.Context, id string) (*Session, uint64, error) {
	bucket := r.kv.Bucket()
	raw, rev, err := r.b.LeaderLast(ctx, bus.KVStream(bucket), bus.KVSubject(bucket, id))
	if err != nil || len(raw) == 0 {
		return nil, 0, fmt.Errorf("get session %s: %w", id, ErrNotFound)
	}
	return decodeSession(id, raw, rev)
}

func decodeSession(id string, raw []byte, rev uint64) (*Session, uint64, error) {
	var s Session
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, 0, fmt.Errorf("decode session %s: %w", id, err)
	}
	return &s, rev, nil
}

// List returns every session that is not forgotten, oldest first, as it
// reads now.
func (r *Registry) List(ctx context.Context) ([]Session, error) {
	keys, err := r.b.ListKeys(ctx, r.kv)
	if err != nil {
		// Neither the bucket's consumer nor a direct read of it answered:
		// the store is unavailable, not the node broken (never a 500).
		return nil, sentinel.Wrap(sentinel.CodeUnavailable, err, "list sessions: the store did not answer")
	}
	now := r.now()
	out := make([]Session, 0, len(keys))
	for _, k := range keys {
		s, _, err := r.get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !s.Forgotten {
			out = append(out, s.Effective(now))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedTs != out[j].CreatedTs {
			return out[i].CreatedTs < out[j].CreatedTs
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// mutate applies fn to the stored record under compare-and-set, creating
// it (fn sees a nil-free zero record with created = true) when missing and
// create is set. fn may return errSkip to leave the record unchanged.
func (r *Registry) mutate(ctx context.Context, id string, create bool, fn func(s *Session, created bool) error) (Session, bool, error) {
	if !sentinel.ValidSessionID(id) {
		return Session{}, false, sentinel.Errorf(sentinel.CodeInvalidSessionID, "session id %q must be "+sentinel.SessionIDRule, id)
	}
	for attempt := 0; attempt < 64; attempt++ {
		cur, rev, err := r.get(ctx, id)
		created := false
		switch {
		case errors.Is(err, ErrNotFound):
			if !create {
				return Session{}, false, err
			}
			created = true
			cur = &Session{Session: sentinel.Session{ID: id, Status: sentinel.SessionRunning, CreatedTs: r.now().UnixMilli(), LastSeenTs: r.now().UnixMilli(), Sentinel: true}}
		case err != nil:
			return Session{}, false, err
		}
		before := *cur
		if err := fn(cur, created); err != nil {
			if errors.Is(err, errSkip) {
				return before, false, nil
			}
			return Session{}, false, err
		}
		raw, err := json.Marshal(cur)
		if err != nil {
			return Session{}, false, fmt.Errorf("encode session %s: %w", id, err)
		}
		if created {
			_, err = r.kv.Create(ctx, id, raw)
		} else {
			_, err = r.kv.Update(ctx, id, raw, rev)
		}
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue
		}
		if err != nil {
			return Session{}, false, fmt.Errorf("store session %s: %w", id, err)
		}
		return *cur, created, nil
	}
	return Session{}, false, fmt.Errorf("store session %s: %w", id, sentinel.ErrConflict)
}

var errSkip = errors.New("skip")

// Register creates or updates a session and marks it running (a
// registration is also a heartbeat). An ended or forgotten session is
// revived with its end reason cleared. The session's home becomes this
// node (SetNode).
func (r *Registry) Register(ctx context.Context, in sentinel.RegisterSession) (Session, bool, error) {
	if in.ParentSessionID != nil && *in.ParentSessionID != "" && !sentinel.ValidSessionID(*in.ParentSessionID) {
		return Session{}, false, sentinel.Errorf(sentinel.CodeInvalidSessionID, "parentSessionId %q must be "+sentinel.SessionIDRule, *in.ParentSessionID)
	}
	if in.ParentSessionID != nil && *in.ParentSessionID == in.ID {
		return Session{}, false, sentinel.Errorf(sentinel.CodeInvalidInput, "a session cannot be its own parent")
	}
	if in.HeartbeatTTLMs != nil && *in.HeartbeatTTLMs < 0 {
		return Session{}, false, sentinel.Errorf(sentinel.CodeInvalidInput, "heartbeatTtlMs must not be negative")
	}
	revived := false
	s, created, err := r.mutate(ctx, in.ID, true, func(s *Session, _ bool) error {
		revived = s.Forgotten
		if s.Forgotten {
			*s = Session{Session: sentinel.Session{ID: s.ID, CreatedTs: r.now().UnixMilli(), Sentinel: true}}
		}
		setStr(&s.Label, in.Label)
		setStr(&s.Cwd, in.Cwd)
		setStr(&s.ParentSessionID, in.ParentSessionID)
		if in.Hooks != nil {
			s.Hooks = in.Hooks
		}
		if in.HeartbeatTTLMs != nil {
			s.HeartbeatTTLMs = *in.HeartbeatTTLMs
		}
		if in.Sentinel != nil {
			s.Sentinel = *in.Sentinel
		}
		if r.node != "" {
			s.HomeNode = r.node
		}
		s.Status = sentinel.SessionRunning
		s.EndedReason = ""
		s.LastSeenTs = r.now().UnixMilli()
		return nil
	})
	if err != nil {
		return Session{}, false, err
	}
	created = created || revived
	if created {
		r.log.Info("session registered", "session", s.ID)
	}
	return s, created, nil
}

func setStr(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// End ends a session with reason (default operator-stopped) and publishes
// exited (crashed for the crashed reason). The reason forgotten turns the
// row into a tombstone. An already ended session only has its reason
// updated.
func (r *Registry) End(ctx context.Context, id, reason string) (Session, error) {
	if reason == "" {
		reason = ReasonOperatorStopped
	}
	if len(reason) > 64 {
		return Session{}, sentinel.Errorf(sentinel.CodeInvalidInput, "reason is longer than 64 characters")
	}
	s, _, err := r.mutate(ctx, id, false, func(s *Session, _ bool) error {
		if s.Forgotten {
			return fmt.Errorf("end session %s: %w", id, ErrNotFound)
		}
		wasAlive := s.Alive(r.now())
		s.Status = sentinel.SessionEnded
		s.EndedTs = r.now().UnixMilli()
		s.EndedReason = reason
		if reason == ReasonForgotten {
			s.Forgotten = true
		}
		if wasAlive {
			kind := sentinel.FollowExited
			if reason == ReasonCrashed {
				kind = sentinel.FollowCrashed
			}
			r.enqueue(s, LifecycleEvent{Kind: kind, SessionID: id, Label: s.Label, Reason: reason, Detail: s.LastOutput})
		}
		return nil
	})
	if err != nil {
		return Session{}, err
	}
	r.flush(ctx, id, s.Pending)
	return s.Effective(r.now()), nil
}

// Sweep ends every session whose heartbeat lapsed with reason crashed and
// publishes crashed for each, and publishes what any session's lifecycle
// outbox still holds (outbox.go). It returns how many it ended.
func (r *Registry) Sweep(ctx context.Context) (int, error) {
	all, err := r.List(ctx)
	if err != nil {
		return 0, err
	}
	r.FlushPending(ctx, all)
	n := 0
	for _, v := range all {
		if v.Status != sentinel.SessionEnded || v.EndedReason != ReasonCrashed {
			continue
		}
		lapsed := false
		s, _, err := r.mutate(ctx, v.ID, false, func(s *Session, _ bool) error {
			lapsed = false
			if !s.Lapsed(r.now()) {
				return errSkip
			}
			lapsed = true
			s.Status = sentinel.SessionEnded
			s.EndedTs = r.now().UnixMilli()
			s.EndedReason = ReasonCrashed
			s.LastError = "heartbeat lapsed"
			r.enqueue(s, LifecycleEvent{Kind: sentinel.FollowCrashed, SessionID: s.ID, Label: s.Label, Reason: ReasonCrashed, Detail: s.LastError})
			return nil
		})
		if err != nil {
			r.log.Warn("heartbeat sweep failed", "session", v.ID, "err", err)
			continue
		}
		if lapsed {
			n++
			r.flush(ctx, s.ID, s.Pending)
		}
	}
	return n, nil
}

// ContinueTo records that id was resumed as next: id becomes retired with
// continuedTo = next, and next is registered running (inheriting label,
// cwd, parent, hooks and home node) when it is not known yet. The link is a
// compare-and-set: a session continues to one successor only. When another
// resume linked id to a successor first (two nodes ran its resume hook at
// once), nothing is written and that successor is returned; else next is.
func (r *Registry) ContinueTo(ctx context.Context, id, next string) (string, error) {
	winner := next
	old, _, err := r.mutate(ctx, id, false, func(s *Session, _ bool) error {
		if s.ContinuedTo != "" && s.ContinuedTo != next {
			winner = s.ContinuedTo
			return errSkip
		}
		winner = next
		s.ContinuedTo = next
		return nil
	})
	if err != nil {
		return "", err
	}
	if winner != next {
		return winner, nil
	}
	_, _, err = r.mutate(ctx, next, true, func(s *Session, created bool) error {
		if created || s.Forgotten {
			*s = Session{Session: sentinel.Session{ID: next, Label: old.Label, Cwd: old.Cwd, ParentSessionID: old.ParentSessionID, Hooks: old.Hooks, HomeNode: old.HomeNode,
				HeartbeatTTLMs: old.HeartbeatTTLMs, Sentinel: old.Sentinel, CreatedTs: r.now().UnixMilli()}}
		}
		s.Status = sentinel.SessionRunning
		s.EndedReason = ""
		s.LastSeenTs = r.now().UnixMilli()
		return nil
	})
	return next, err
}

// MarkResumed marks a session revived in place: running, end reason
// cleared, seen now.
func (r *Registry) MarkResumed(ctx context.Context, id string) error {
	_, _, err := r.mutate(ctx, id, false, func(s *Session, _ bool) error {
		s.Status = sentinel.SessionRunning
		s.EndedReason = ""
		s.LastSeenTs = r.now().UnixMilli()
		return nil
	})
	return err
}

// SetNotifyError records the last notify-hook failure of a session.
func (r *Registry) SetNotifyError(ctx context.Context, id string, failure error) error {
	_, _, err := r.mutate(ctx, id, false, func(s *Session, _ bool) error {
		s.NotifyError = failure.Error()
		s.NotifyErrorTs = r.now().UnixMilli()
		return nil
	})
	return err
}

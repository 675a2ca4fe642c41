package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/agentproto/sentinel"
)

// Notifier runs a session's notify hook when a message lands in its
// inbox, on its own workers: it never blocks or fails the delivery. fyi
// messages never trigger it. The last failure is recorded on the session.
// In a cluster (NewHomes attached), a command hook of a session that
// lives on another node is handed to that node as a durable job instead.
// Build it with NewNotifier.
type Notifier struct {
	registry *Registry
	runner   *HookRunner
	log      *slog.Logger
	// homes, when set (NewHomes), sends command hooks to the session's
	// home node.
	homes *Homes
	// workers is the number of concurrent hook runs; queueSize the number
	// of pending notifications kept before new ones are dropped.
	workers   int
	queueSize int

	queue    chan sentinel.Message
	recent   recentIDs
	ctx      context.Context //nolint:containedctx // the notifier's own lifecycle
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  atomic.Bool
	stopping atomic.Bool
	mu       sync.RWMutex
}

// NotifierOption adjusts a Notifier built by NewNotifier.
type NotifierOption func(*Notifier)

// WithNotifierLogger logs the notifier's failures to l (discarded by
// default).
func WithNotifierLogger(l *slog.Logger) NotifierOption { return func(n *Notifier) { n.log = l } }

// WithNotifierLimits sets the concurrent hook runs (default 4) and the
// pending notifications kept before new ones are dropped (default 256);
// a value <= 0 keeps its default.
func WithNotifierLimits(workers, queue int) NotifierOption {
	return func(n *Notifier) { n.workers, n.queueSize = workers, queue }
}

// NewNotifier builds the notifier of reg's sessions, running their hooks
// with runner. Start starts its workers.
func NewNotifier(reg *Registry, runner *HookRunner, opts ...NotifierOption) *Notifier {
	n := &Notifier{registry: reg, runner: runner}
	for _, o := range opts {
		o(n)
	}
	if n.workers <= 0 {
		n.workers = 4
	}
	if n.queueSize <= 0 {
		n.queueSize = 256
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	return n
}

// Start starts the workers. It is a no-op when already started.
func (n *Notifier) Start() {
	if !n.started.CompareAndSwap(false, true) {
		return
	}
	n.queue = make(chan sentinel.Message, n.queueSize)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for i := 0; i < n.workers; i++ {
		n.wg.Add(1)
		go n.work()
	}
}

// Stop cancels running hooks and waits for the workers. Idempotent and
// nil-safe.
func (n *Notifier) Stop() {
	if n == nil || !n.started.Load() || !n.stopping.CompareAndSwap(false, true) {
		return
	}
	n.mu.Lock()
	n.cancel()
	close(n.queue)
	n.mu.Unlock()
	n.wg.Wait()
}

// Notify queues msg for its recipient's notify hook, once per message on
// this node (the last recentCap message ids queued are remembered: the
// same message appended again, a redelivery, wakes nobody twice). It never
// blocks: a full queue drops the notification with a warning (and forgets
// it was asked, so a later repeat queues it).
func (n *Notifier) Notify(msg sentinel.Message) {
	if n == nil || msg.Urgency == sentinel.UrgencyFYI || !n.started.Load() {
		return
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.stopping.Load() || !n.recent.add(msg.ID) {
		return
	}
	select {
	case n.queue <- msg:
	default:
		n.recent.remove(msg.ID)
		n.log.Warn("notify queue full; notification dropped", "session", msg.To, "message", msg.ID)
	}
}

// recentCap bounds the message ids a notifier remembers.
const recentCap = 4096

// recentIDs is a bounded set of message ids, oldest evicted first.
type recentIDs struct {
	mu    sync.Mutex
	ids   map[string]bool // mu must be held
	order []string        // mu must be held
}

// add reports whether id was not in the set, and adds it.
func (r *recentIDs) add(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids[id] {
		return false
	}
	if r.ids == nil {
		r.ids = map[string]bool{}
	}
	r.ids[id] = true
	r.order = append(r.order, id)
	if len(r.order) > recentCap {
		delete(r.ids, r.order[0])
		r.order = r.order[1:]
	}
	return true
}

func (r *recentIDs) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ids, id)
}

func (n *Notifier) work() {
	defer n.wg.Done()
	for msg := range n.queue {
		n.run(msg)
	}
}

func (n *Notifier) run(msg sentinel.Message) {
	ctx := n.ctx
	if err := n.dispatch(ctx, msg, 0); err != nil {
		n.log.Warn("notify hook not run", "session", msg.To, "message", msg.ID, "err", err)
		if errors.Is(err, errHandOver) {
			if serr := n.registry.SetNotifyError(context.WithoutCancel(ctx), msg.To, err); serr != nil {
				n.log.Warn("recording the notify failure failed", "session", msg.To, "err", serr)
			}
		}
	}
}

// dispatch runs msg's notify hook here, or hands it to the session's home
// node when that is another node and the hook is a command (hops counts
// the hand-overs so far; past maxHomeHops it runs here). It fails only
// when the session could not be read or the hand-over failed
// (errHandOver); a failing hook is recorded on the session, not returned.
func (n *Notifier) dispatch(ctx context.Context, msg sentinel.Message, hops int) error {
	s, err := n.registry.Lookup(ctx, msg.To)
	if err != nil {
		return err
	}
	if s == nil || s.Forgotten || s.Hooks == nil || s.Hooks.Notify == nil {
		return nil
	}
	if home, remote := n.homes.remoteHome(s, s.Hooks.Notify); remote && hops < maxHomeHops {
		return n.homes.enqueueNotify(ctx, home, msg, hops+1)
	}
	n.runHook(ctx, s, msg)
	return nil
}

// runHook runs the notify hook of s for msg on this node and records a
// failure on the session.
func (n *Notifier) runHook(ctx context.Context, s *Session, msg sentinel.Message) {
	payload, err := json.Marshal(msg)
	if err != nil {
		return
	}
	vars := map[string]string{"sessionId": msg.To, "messageId": msg.ID, "urgency": string(msg.Urgency), "kind": msg.Kind, "seq": strconv.FormatUint(msg.Seq, 10)}
	if _, err := n.runner.Run(ctx, s.Hooks.Notify, vars, payload); err != nil {
		n.log.Warn("notify hook failed", "session", msg.To, "message", msg.ID, "err", err)
		if serr := n.registry.SetNotifyError(context.WithoutCancel(ctx), msg.To, err); serr != nil {
			n.log.Warn("recording the notify failure failed", "session", msg.To, "err", serr)
		}
	}
}

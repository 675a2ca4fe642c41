package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// HomesBus is what Homes need of the bus (*bus.Bus is one): the hook
// jobs stream and its consumers, and request/reply between nodes.
type HomesBus interface {
	EnsureStream(ctx context.Context, spec bus.StreamSpec) (jetstream.Stream, error)
	EnsureConsumer(ctx context.Context, stream string, want jetstream.ConsumerConfig) (jetstream.Consumer, error)
	PublishDedup(ctx context.Context, subj string, data []byte, msgID string) (seq uint64, dup bool, err error)
	Request(ctx context.Context, subject string, data []byte) ([]byte, error)
	Serve(subject string, fn func(data []byte, reply func([]byte))) (func() error, error)
}

// Homes runs the command hooks of a session on its home node (the node it
// registered through: where its harness lives), whichever node of the
// cluster needs them. URL hooks, and the hooks of a session without a home
// or living here, run on the node that needs them.
//
//   - notify: the node that stored the message enqueues a durable job on
//     the home's subject of the SENTINEL_HOOKS work queue (Nats-Msg-Id
//     notify:<home>:<message id>, so a retried hand-over is stored once);
//     the home node's consumer runs the hook and acks after. A job for a
//     home that is down waits for it.
//   - resume: the delivering node needs the hook's answer (the live id),
//     so it asks the home node over NATS request/reply within the
//     delivery's deadline; no answer fails the resolution, and the event is
//     retried later (Nak), never acknowledged unrouted.
//
// A single node has no Homes: every hook runs locally. Start serves this
// node's jobs and resume requests; Stop ends them.
type Homes struct {
	bus HomesBus
	// node is this node's name (the homeNode of sessions registered here).
	node     string
	notifier *Notifier
	resolver *Resolver
	log      *slog.Logger
	// workers is how many jobs run at once (default 4); resumes how many
	// resume requests (default 16: more are refused, and retried by the
	// asking node).
	workers int
	resumes int

	ctx       context.Context //nolint:containedctx // the component's own lifecycle
	cancel    context.CancelFunc
	stopFetch context.CancelFunc
	unserve   func() error
	sem       chan struct{}
	wg        sync.WaitGroup
	started   atomic.Bool
	// mu guards stopping against new resume goroutines (wg.Add).
	mu       sync.Mutex
	stopping bool
}

// HomesOption sets one of Homes' optional settings.
type HomesOption func(*Homes)

// WithHomesLogger logs through l (discarded by default).
func WithHomesLogger(l *slog.Logger) HomesOption { return func(h *Homes) { h.log = l } }

// WithHomesLimits sets how many hook jobs run at once (default 4) and how
// many resume requests are answered at once (default 16: more are
// refused, and retried by the asking node).
func WithHomesLimits(workers, resumes int) HomesOption {
	return func(h *Homes) { h.workers, h.resumes = workers, resumes }
}

// NewHomes returns the Homes of node (this node's name: the homeNode of
// the sessions registered here) over b, running notify hooks through
// notifier and resumes through resolver, with opts applied. It attaches
// itself to notifier and resolver: from then on their command hooks of a
// session homed on another node go to that node.
func NewHomes(b HomesBus, node string, notifier *Notifier, resolver *Resolver, opts ...HomesOption) *Homes {
	h := &Homes{bus: b, node: node, notifier: notifier, resolver: resolver}
	notifier.homes, resolver.homes = h, h
	for _, o := range opts {
		o(h)
	}
	if h.workers <= 0 {
		h.workers = 4
	}
	if h.resumes <= 0 {
		h.resumes = 16
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// maxHomeHops bounds how often one notify job is handed on (a home that
// moved while it travelled); past it the job runs where it is.
const maxHomeHops = 3

// Hook job kinds.
const jobNotify = "notify"

// errHandOver marks a hook that could not be handed to its home node.
var errHandOver = errors.New("handing the hook to the session's home node failed")

// errHomeMoved marks a resume asked of a node that is no longer the
// session's home: the asking node retries and finds the new home.
var errHomeMoved = errors.New("the session's home moved")

// ErrHomeUnreachable marks (wrapped) a resume whose home node did not
// answer: it is down, cut off or busy. The delivery is retried.
var ErrHomeUnreachable = errors.New("the session's home node is unreachable")

// hookJob is one job of the hook work queue.
type hookJob struct {
	Kind string `json:"kind"`
	// From is the node that enqueued it; Hops how often it was handed on.
	From    string           `json:"from"`
	Hops    int              `json:"hops"`
	Message sentinel.Message `json:"message"`
}

// remoteHome returns the node that must run hook for s, and true, when
// that is not this node: hook is a command and s lives elsewhere. It is
// nil-safe (a single node runs everything locally).
func (h *Homes) remoteHome(s *Session, hook *sentinel.Hook) (string, bool) {
	if h == nil || hook == nil || hook.URL != "" || len(hook.Command) == 0 {
		return "", false
	}
	if s.HomeNode == "" || s.HomeNode == h.node {
		return "", false
	}
	return s.HomeNode, true
}

func (h *Homes) logger() *slog.Logger {
	if h.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.log
}

// enqueueNotify hands msg's notify hook to home as a durable job.
func (h *Homes) enqueueNotify(ctx context.Context, home string, msg sentinel.Message, hops int) error {
	raw, err := json.Marshal(hookJob{Kind: jobNotify, From: h.node, Hops: hops, Message: msg})
	if err != nil {
		return fmt.Errorf("%w (node %s): encode: %w", errHandOver, home, err)
	}
	dup, err := publishHookJob(ctx, h.bus, home, HookJobMsgID(jobNotify, home, msg.ID), raw)
	if err != nil {
		return fmt.Errorf("%w (node %s): %w", errHandOver, home, err)
	}
	h.logger().Debug("notify hook handed to the home node", "session", msg.To, "message", msg.ID, "home", home, "duplicate", dup)
	return nil
}

// resumeRequest asks a home node to resume one of its sessions.
type resumeRequest struct {
	SessionID string `json:"sessionId"`
	From      string `json:"from"`
	// TimeoutMs is the time the asking node waits for the answer.
	TimeoutMs int64 `json:"timeoutMs"`
}

// resumeReply is the home node's answer: a resolution, or an error (the
// registry could not be read, the home moved, the node is busy).
type resumeReply struct {
	Action string `json:"action,omitempty"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
}

var actionNames = map[Action]string{Deliver: "deliver", Forward: "forward", Park: "park"}

func actionOf(name string) (Action, bool) {
	for a, n := range actionNames {
		if n == name {
			return a, true
		}
	}
	return 0, false
}

// defaultResumeWait bounds a resume request made without a deadline.
const defaultResumeWait = DefaultHookTimeout + 5*time.Second

// resume asks home to resume session id and returns its resolution. An
// error (the home is unreachable, did not answer in time, or failed) means
// retry later.
func (h *Homes) resume(ctx context.Context, home, id string) (Resolution, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultResumeWait)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	raw, err := json.Marshal(resumeRequest{SessionID: id, From: h.node, TimeoutMs: time.Until(deadline).Milliseconds()})
	if err != nil {
		return Resolution{}, fmt.Errorf("resume session %s: encode: %w", id, err)
	}
	answer, err := h.bus.Request(ctx, ResumeSubject(home), raw)
	if err != nil {
		switch {
		case errors.Is(err, bus.ErrNoResponders):
			return Resolution{}, fmt.Errorf("resume session %s: its resume hook runs on its home node %s, which is not up: %w", id, home, ErrHomeUnreachable)
		case ctx.Err() != nil:
			return Resolution{}, fmt.Errorf("resume session %s: its home node %s did not answer in time (%w): %w", id, home, context.Cause(ctx), ErrHomeUnreachable)
		}
		return Resolution{}, fmt.Errorf("resume session %s on its home node %s: %w", id, home, err)
	}
	var rep resumeReply
	if err := json.Unmarshal(answer, &rep); err != nil {
		return Resolution{}, fmt.Errorf("resume session %s: the answer of node %s: %w", id, home, err)
	}
	if rep.Error != "" {
		return Resolution{}, fmt.Errorf("resume session %s on its home node %s: %s", id, home, rep.Error)
	}
	act, ok := actionOf(rep.Action)
	if !ok {
		return Resolution{}, fmt.Errorf("resume session %s: node %s answered an unknown action %q", id, home, rep.Action)
	}
	h.logger().Debug("session resumed on its home node", "session", id, "home", home, "action", rep.Action, "to", rep.To)
	return Resolution{Action: act, To: rep.To, Reason: rep.Reason}, nil
}

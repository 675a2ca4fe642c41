package providers

import (
	"context"
	"net/http"
	"time"

	"github.com/agentproto/sentinel"
)

// Capabilities is pure metadata surfaced by list_sentinel_adapters. It never
// carries secrets.
type Capabilities struct {
	Subjects         []string `json:"subjects"`
	Push             bool     `json:"push"`
	Poll             bool     `json:"poll"`
	Durable          bool     `json:"durable"`
	NeedsPublicURL   bool     `json:"needsPublicUrl"`
	RequiresAuth     bool     `json:"requiresAuth"`
	TypicalLatencyMs int      `json:"typicalLatencyMs"`
}

// Info describes a provider for listings.
type Info struct {
	Slug          string `json:"slug"`
	Name          string `json:"name"`
	Version       string `json:"version"`
	Description   string `json:"description"`
	RequiresSetup bool   `json:"requiresSetup"`
}

// Readiness answers "can this provider operate right now". Reason names the
// fix when Ready is false.
type Readiness struct {
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
	// Fix, when set, says what makes the provider ready (a command to
	// run, a setting to give).
	Fix string `json:"fix,omitempty"`
	// CredentialSource names where the provider's credential comes from
	// (GitHub providers: gh, GH_TOKEN or GITHUB_TOKEN); never the
	// credential itself.
	CredentialSource string `json:"credentialSource,omitempty"`
}

// Delivery modes.
const (
	ModePoll = "poll"
	ModePush = "push"
)

// Delivery is how the daemon wants events: poll at IntervalMs, or push to
// CallbackURL (the public daemon origin; the provider appends its route).
type Delivery struct {
	Mode        string `json:"mode"`
	IntervalMs  int    `json:"intervalMs,omitempty"`
	CallbackURL string `json:"callbackUrl,omitempty"`
}

// CreateRequest is the input of Create. SentinelID is minted before Create
// is called.
type CreateRequest struct {
	SentinelID string
	Spec       sentinel.Spec
	Delivery   Delivery
}

// Health is the result of Status: Ok, and a human Detail. Extra carries
// provider-specific facts (backoff state, quota left, reconciliation
// counts); it must never carry a credential.
type Health struct {
	OK      bool           `json:"ok"`
	Detail  string         `json:"detail,omitempty"`
	Pending *int           `json:"pending,omitempty"`
	Extra   map[string]any `json:"extra,omitempty"`
}

// SetupField describes one field setup_sentinel_provider accepts.
//
// Endpoint marks the field that says where the provider sends its
// Sensitive fields (an API base URL). Setup refuses a value that is not
// https (http only to a loopback host, see CheckSecureURL), and refuses a
// change of it that does not supply every Sensitive field again in the same
// call (setup_credentials_required): a stored secret never follows a new
// URL.
type SetupField struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive"`
	Endpoint    bool   `json:"endpoint,omitempty"`
}

// Provider is the contract every sentinel provider implements. Methods may
// be called concurrently for different handles; ctx bounds any I/O.
type Provider interface {
	// Info returns the provider's slug and descriptive metadata.
	Info() Info
	// Capabilities returns the declared capabilities.
	Capabilities() Capabilities
	// DefaultTypes returns the type globs a clause with no types uses.
	DefaultTypes(subject string) []string
	// Create starts the provider-side watch for a new sentinel and returns
	// its handle. A failure is a setup error naming the fix; the sentinel is
	// then not created (provider_create_failed).
	Create(ctx context.Context, req CreateRequest) (sentinel.Handle, error)
	// Attach re-attaches an existing handle at start-up and may return an
	// updated handle. An error marks the sentinel error with lastError.
	Attach(ctx context.Context, h sentinel.Handle, d Delivery) (sentinel.Handle, error)
	// Cancel stops the provider-side watch. It must be idempotent.
	Cancel(ctx context.Context, h sentinel.Handle) error
	// Status reports the health of the provider-side watch.
	Status(ctx context.Context, h sentinel.Handle) (Health, error)
}

// PollResult is what one Poll returns: events after the handle's cursor,
// oldest first, the new cursor, and items that could not be parsed (parked
// by the runtime before the cursor moves past them).
type PollResult struct {
	Events    []sentinel.Event
	Cursor    string
	Malformed []Malformed
	// Failure is a failure the provider handled itself (it keeps its
	// backoff state in Cursor): the runtime still persists Cursor, records
	// Failure as the sentinel's lastError and counts a poll error. Empty
	// when the provider is healthy.
	Failure string
}

// Malformed is a provider item that could not be turned into an event. It
// never carries the payload data.
type Malformed struct {
	Seq              *int64 `json:"seq,omitempty"`
	RemoteDeliveryID string `json:"remoteDeliveryId,omitempty"`
	Error            string `json:"error"`
	Digest           string `json:"digest,omitempty"`
	Bytes            int    `json:"bytes,omitempty"`
}

// Poller is implemented by poll-capable providers.
type Poller interface {
	// Poll returns at most limit events after h.Cursor, oldest first. Event
	// ids must be deterministic so a re-poll of the same window yields the
	// same ids. A returned error is recorded on the sentinel as lastError.
	Poll(ctx context.Context, h sentinel.Handle, limit int) (PollResult, error)
	// Ack tells the provider that every event up to cursor is durably
	// handled. It is called only after the whole batch was persisted.
	Ack(ctx context.Context, h sentinel.Handle, cursor string) error
}

// Inbound is one push request addressed to /inbound/sentinel-<HookKey>.
type Inbound struct {
	HookKey string
	Body    []byte
	Header  http.Header
	Now     time.Time
}

// InboundParser is implemented by push-capable providers. ParseInbound
// verifies the signature over the raw body before parsing anything, then
// returns the normalized events (none for a ping or an unsupported event
// type). h is the handle of a sentinel bound to the hook key. Errors are
// *InboundError values (or ErrUnknownHook).
type InboundParser interface {
	ParseInbound(ctx context.Context, in Inbound, h sentinel.Handle) ([]sentinel.Event, error)
}

// ReadinessChecker is implemented by providers that can tell whether they
// can operate right now. Readiness must not panic; it should be cheap.
type ReadinessChecker interface {
	Readiness(ctx context.Context) Readiness
}

// ReachChecker is implemented by providers that can tell, at create,
// whether a spec's repository is reachable with their credentials. It
// returns "" when it is (or cannot tell), else what is wrong and its fix;
// the sentinel is created either way and carries a repo_unreachable
// warning.
type ReachChecker interface {
	Reachable(ctx context.Context, spec sentinel.Spec) (problem, fix string)
}

// SetupFielder is implemented by providers that take setup fields.
type SetupFielder interface {
	SetupFields() []SetupField
}

// DeliveryPreferrer is implemented by providers that choose their own
// delivery mode (e.g. agentpush push when opted in with an https URL).
type DeliveryPreferrer interface {
	PreferredDelivery(ctx context.Context, intervalMs int) Delivery
}

// HookKeyOf returns the hook key a handle is bound to (State["hookKey"]), or
// "".
func HookKeyOf(h sentinel.Handle) string { return h.StateString("hookKey") }

// PreferredDelivery resolves the delivery preference for p: its own choice
// when it declares one, else poll at intervalMs when it can poll, else push.
func PreferredDelivery(ctx context.Context, p Provider, intervalMs int, callbackURL string) Delivery {
	if dp, ok := p.(DeliveryPreferrer); ok {
		return dp.PreferredDelivery(ctx, intervalMs)
	}
	if p.Capabilities().Poll {
		return Delivery{Mode: ModePoll, IntervalMs: intervalMs}
	}
	return Delivery{Mode: ModePush, CallbackURL: callbackURL}
}

// Reconciler is implemented by providers whose upstream can lose deliveries
// (GitHub never redelivers a failed webhook by itself). The runtime calls
// Reconcile at start and periodically for each bound handle; it asks the
// upstream to redeliver what failed and reports counts in the result.
type Reconciler interface {
	Reconcile(ctx context.Context, h sentinel.Handle) (ReconcileResult, error)
}

// ReconcileResult reports one reconciliation pass.
type ReconcileResult struct {
	Checked     int `json:"checked"`
	Failed      int `json:"failed"`
	Redelivered int `json:"redelivered"`
	// Unrecoverable counts the failed deliveries newly found past recovery
	// (too old to be redelivered, or failing on every redelivery): they
	// are reported, not asked for again.
	Unrecoverable int `json:"unrecoverable"`
}

// SetupChecker is implemented by providers that judge their setup fields
// before the node stores them (an adapter's setup method). fields are the
// given fields laid over the stored ones; an error names the fix and the
// node stores nothing.
type SetupChecker interface {
	CheckSetup(ctx context.Context, fields map[string]string) error
}

// AvailabilityChecker is implemented by providers that may be unusable
// altogether (a discovered adapter that does not start or fails its
// handshake). Unavailable returns why ("" when usable); listings show such
// a provider as unavailable with the reason. It is bounded and never
// panics.
type AvailabilityChecker interface {
	Unavailable(ctx context.Context) string
}

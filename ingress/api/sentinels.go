package api

import (
	"context"
	"errors"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// SentinelStatus is the health of one sentinel's provider-side watch.
type SentinelStatus struct {
	OK        bool            `json:"ok"`
	Detail    string          `json:"detail,omitempty"`
	Status    sentinel.Status `json:"status"`
	Provider  string          `json:"provider"`
	LastError string          `json:"lastError,omitempty"`
	Extra     map[string]any  `json:"extra,omitempty"`
}

// StatusAnswer is the answer of GET /sentinels/{id}/status and what
// `sentinel status <id> --json` prints. ID names the sentinel, so answers
// read side by side (a script looping over ids) tell which is which.
type StatusAnswer struct {
	OK     bool           `json:"ok"`
	ID     string         `json:"id"`
	Status SentinelStatus `json:"status"`
}

// Adapter is one entry of the adapter listing; never a credential.
type Adapter struct {
	Slug         string                 `json:"slug"`
	Name         string                 `json:"name"`
	Status       string                 `json:"status"`
	Version      string                 `json:"version"`
	Description  string                 `json:"description,omitempty"`
	Capabilities providers.Capabilities `json:"capabilities"`
	SetupFields  []providers.SetupField `json:"setupFields,omitempty"`
	Info         map[string]any         `json:"info,omitempty"`
}

// SetupResult reports a completed setup: field names only, never values.
type SetupResult struct {
	Slug      string              `json:"slug"`
	Stored    []string            `json:"stored"`
	Readiness providers.Readiness `json:"readiness"`
	// EndpointUnconfirmed: the setup set the provider's endpoint to a new
	// value, so watches without a provider do not auto-select it until a
	// setup restates the endpoint.
	EndpointUnconfirmed bool `json:"endpointUnconfirmed,omitempty"`
}

// SentinelQuery filters and pages GET /sentinels. Every set filter must
// match; Limit 0 answers every match in one page (the pinned API's
// answer), otherwise a page of at most Limit sentinels starting after the
// After cursor (the Next of the previous page).
type SentinelQuery struct {
	Status        sentinel.Status `json:"status,omitempty"`
	Provider      string          `json:"provider,omitempty"`
	Session       string          `json:"session,omitempty"`
	SubjectPrefix string          `json:"subject,omitempty"`
	Limit         int             `json:"limit,omitempty"`
	After         string          `json:"after,omitempty"`
}

// Paging bounds of GET /sentinels.
const (
	// DefaultSentinelPage is the page size when after is given without a
	// limit.
	DefaultSentinelPage = 100
	// MaxSentinelPage is the largest limit.
	MaxSentinelPage = 1000
)

// Validate checks the query: a known status, a well-formed session id, a
// limit within 0..MaxSentinelPage. A bad value is invalid_input
// (invalid_session_id for the session). The cursor is checked by the
// service.
func (q SentinelQuery) Validate() error {
	switch q.Status {
	case "", sentinel.StatusActive, sentinel.StatusPaused, sentinel.StatusExpired, sentinel.StatusOrphaned, sentinel.StatusError:
	default:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "status must be one of active, paused, expired, orphaned, error (got %q)", clipQuery(string(q.Status)))
	}
	if q.Session != "" && !sentinel.ValidSessionID(q.Session) {
		return sentinel.Errorf(sentinel.CodeInvalidSessionID, "session %q is not a session id (1-128 of [A-Za-z0-9_-], not starting with -)", clipQuery(q.Session))
	}
	if q.Limit < 0 || q.Limit > MaxSentinelPage {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be an integer within 1..%d", MaxSentinelPage)
	}
	return nil
}

// clipQuery bounds a value quoted in an error.
func clipQuery(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// SentinelPage is one page of sentinels in list order (oldest first).
// Next, when set, continues the listing (pass it as after); it is empty on
// the last page.
type SentinelPage struct {
	Sentinels []sentinel.View `json:"sentinels"`
	Next      string          `json:"next,omitempty"`
}

// Sentinels is the sentinel service every surface calls. Errors are
// *sentinel.Error values with catalogue codes.
type Sentinels interface {
	Watch(ctx context.Context, req sentinel.WatchRequest, callerSession string) (sentinel.View, error)
	List(ctx context.Context) ([]sentinel.View, error)
	// ListPage answers one page of q; a malformed cursor or filter is
	// invalid_input.
	ListPage(ctx context.Context, q SentinelQuery) (SentinelPage, error)
	Get(ctx context.Context, id string) (sentinel.View, error)
	Remove(ctx context.Context, id string) error
	Status(ctx context.Context, id string) (SentinelStatus, error)
	PollNow(ctx context.Context, id string) (*sentinel.View, error)
	Adapters(ctx context.Context) ([]Adapter, error)
	Setup(ctx context.Context, slug string, fields map[string]string) (SetupResult, error)
	Parked(ctx context.Context, id string, limit int) ([]sentinel.Parked, error)
}

// InboundResult is the outcome of one push delivery.
type InboundResult struct {
	Ignored   bool
	Events    int
	Sentinels int
	Delivered int
}

// Inbound handles push ingress. Errors: providers.ErrUnknownHook (bare
// 404), *providers.InboundError (its status), ErrPersist (500).
type Inbound interface {
	// KnownHook reports whether any sentinel is bound to the hook key. It
	// is asked before the body is read, so it must not block on I/O for
	// long (the runtime answers from its record cache).
	KnownHook(ctx context.Context, key string) (bool, error)
	Inbound(ctx context.Context, in providers.Inbound) (InboundResult, error)
}

// Health reports readiness of the node.
type Health interface {
	// Ready is nil once the node serves and can write, else the reason.
	Ready(ctx context.Context) error
	// Writable is nil while the node can store writes; else an error with
	// code cluster_unavailable (a node cut off from its cluster).
	Writable() error
}

// ErrPersist is returned (wrapped) by Inbound when verified events could
// not be stored: the only case push ingress answers 500.
var ErrPersist = errors.New("could not persist events")

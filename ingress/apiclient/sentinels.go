package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Sentinels implements api.Sentinels over the node's REST API, so the
// stdio MCP bridge runs the same tool layer as the node's own /mcp.
// Errors are *sentinel.Error values carrying the node's catalogue code and
// wrapping the *Error (errors.As still finds the HTTP status).
type Sentinels struct {
	C *Client
}

var _ api.Sentinels = Sentinels{}

// Watch creates a sentinel (POST /sentinels). An empty SessionID is
// filled with callerSession: over REST the caller identity travels as the
// explicit sessionId.
func (s Sentinels) Watch(ctx context.Context, req sentinel.WatchRequest, callerSession string) (sentinel.View, error) {
	if req.SessionID == "" {
		req.SessionID = callerSession
	}
	if req.SessionID == "" {
		return sentinel.View{}, sentinel.Errorf(sentinel.CodeNoCallerIdentity,
			"no sessionId given and the caller has no session identity; pass sessionId (or start the bridge with --session)")
	}
	return s.Create(ctx, req)
}

// Create posts a watch as it is given (POST /sentinels): the node checks
// it, its sessionId included. The view carries existing, updated and the
// watch's warnings.
func (s Sentinels) Create(ctx context.Context, req sentinel.WatchRequest) (sentinel.View, error) {
	var out struct {
		Sentinel sentinel.View `json:"sentinel"`
	}
	err := s.C.Do(ctx, http.MethodPost, "/sentinels", req, &out)
	return out.Sentinel, AsDomain(err)
}

// List returns every sentinel (GET /sentinels).
func (s Sentinels) List(ctx context.Context) ([]sentinel.View, error) {
	var out struct {
		Sentinels []sentinel.View `json:"sentinels"`
	}
	err := s.C.Do(ctx, http.MethodGet, "/sentinels", nil, &out)
	return out.Sentinels, AsDomain(err)
}

// ListPage returns one page of sentinels (GET /sentinels with the query's
// filters, limit and after).
func (s Sentinels) ListPage(ctx context.Context, q api.SentinelQuery) (api.SentinelPage, error) {
	var out api.SentinelPage
	err := s.C.Do(ctx, http.MethodGet, "/sentinels"+SentinelQueryString(q), nil, &out)
	return out, AsDomain(err)
}

// SentinelQueryString renders q as the query string of GET /sentinels
// ("" when q is empty, else starting with "?").
func SentinelQueryString(q api.SentinelQuery) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("status", string(q.Status))
	set("provider", q.Provider)
	set("session", q.Session)
	set("subject", q.SubjectPrefix)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	set("after", q.After)
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// Get returns one sentinel (GET /sentinels/{id}).
func (s Sentinels) Get(ctx context.Context, id string) (sentinel.View, error) {
	var out struct {
		Sentinel sentinel.View `json:"sentinel"`
	}
	err := s.C.Do(ctx, http.MethodGet, "/sentinels/"+url.PathEscape(id), nil, &out)
	return out.Sentinel, AsDomain(err)
}

// Remove removes a sentinel (DELETE /sentinels/{id}).
func (s Sentinels) Remove(ctx context.Context, id string) error {
	return AsDomain(s.C.Do(ctx, http.MethodDelete, "/sentinels/"+url.PathEscape(id), nil, nil))
}

// Status reads a sentinel's provider health (GET /sentinels/{id}/status).
func (s Sentinels) Status(ctx context.Context, id string) (api.SentinelStatus, error) {
	var out api.StatusAnswer
	err := s.C.Do(ctx, http.MethodGet, "/sentinels/"+url.PathEscape(id)+"/status", nil, &out)
	return out.Status, AsDomain(err)
}

// PollNow forces one poll tick (POST /sentinels/poll?id=).
func (s Sentinels) PollNow(ctx context.Context, id string) (*sentinel.View, error) {
	path := "/sentinels/poll"
	if id != "" {
		path += "?id=" + url.QueryEscape(id)
	}
	var out struct {
		Sentinel *sentinel.View `json:"sentinel"`
	}
	err := s.C.Do(ctx, http.MethodPost, path, nil, &out)
	return out.Sentinel, AsDomain(err)
}

// Adapters lists the providers (GET /adapters).
func (s Sentinels) Adapters(ctx context.Context) ([]api.Adapter, error) {
	var out struct {
		Adapters []api.Adapter `json:"adapters"`
	}
	err := s.C.Do(ctx, http.MethodGet, "/adapters", nil, &out)
	return out.Adapters, AsDomain(err)
}

// Setup configures a provider (POST /adapters/{slug}/setup).
func (s Sentinels) Setup(ctx context.Context, slug string, fields map[string]string) (api.SetupResult, error) {
	var out struct {
		Setup api.SetupResult `json:"setup"`
	}
	body := map[string]any{"fields": fields}
	err := s.C.Do(ctx, http.MethodPost, "/adapters/"+url.PathEscape(slug)+"/setup", body, &out)
	return out.Setup, AsDomain(err)
}

// Parked lists parked records (GET /parked?sentinel=&limit=).
func (s Sentinels) Parked(ctx context.Context, id string, limit int) ([]sentinel.Parked, error) {
	q := url.Values{}
	if id != "" {
		q.Set("sentinel", id)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/parked"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Parked []sentinel.Parked `json:"parked"`
	}
	err := s.C.Do(ctx, http.MethodGet, path, nil, &out)
	return out.Parked, AsDomain(err)
}

// AsDomain turns a client error into a *sentinel.Error with the node's
// code (wrapping the original so errors.As finds *Error): node answers
// keep their catalogue code, an unreachable node is "unavailable", a lost
// answer to a write "outcome_unknown" and an unknown failure "internal".
// nil stays nil.
func AsDomain(err error) error {
	if err == nil {
		return nil
	}
	var de *sentinel.Error
	if errors.As(err, &de) {
		return err
	}
	var ae *Error
	switch {
	case errors.As(err, &ae):
		msg := ae.Message
		if msg == "" {
			msg = ae.Error()
		}
		return sentinel.Wrap(ae.Code, err, msg)
	case errors.Is(err, ErrOutcomeUnknown):
		return sentinel.Wrap(sentinel.CodeOutcomeUnknown, err, err.Error()+" (check whether it was done, e.g. with sentinel_list, before repeating it)")
	case errors.Is(err, ErrUnreachable):
		return sentinel.Wrap(sentinel.CodeUnavailable, err, err.Error()+" (is `sentinel serve` running?)")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return sentinel.Wrap(sentinel.CodeUnavailable, err, err.Error())
	}
	return sentinel.Wrap(sentinel.CodeInternal, err, err.Error())
}

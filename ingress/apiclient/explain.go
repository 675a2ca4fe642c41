package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Explainer implements api.Explainer over the node's REST API (the stdio MCP
// bridge's sentinel_explain).
type Explainer struct {
	C *Client
}

var _ api.Explainer = Explainer{}

// Decisions pages a sentinel's decisions (GET /sentinels/{id}/decisions).
func (j Explainer) Decisions(ctx context.Context, sentinelID string, limit int, after uint64) (sentinel.DecisionPage, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if after > 0 {
		q.Set("after", strconv.FormatUint(after, 10))
	}
	path := "/sentinels/" + url.PathEscape(sentinelID) + "/decisions"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out sentinel.DecisionPage
	err := j.C.Do(ctx, http.MethodGet, path, nil, &out)
	return out, AsDomain(err)
}

// Event tells an event's story (GET /events/{eventId}).
func (j Explainer) Event(ctx context.Context, eventID string) (api.EventStory, error) {
	var out struct {
		Event api.EventStory `json:"event"`
	}
	err := j.C.Do(ctx, http.MethodGet, "/events/"+url.PathEscape(eventID), nil, &out)
	return out.Event, AsDomain(err)
}

// Replay re-runs a parked event (POST /parked/{id}/replay?force=).
func (j Explainer) Replay(ctx context.Context, parkID string, force bool) (api.Replay, error) {
	path := "/parked/" + url.PathEscape(parkID) + "/replay"
	if force {
		path += "?force=true"
	}
	var out struct {
		Replay api.Replay `json:"replay"`
	}
	err := j.C.Do(ctx, http.MethodPost, path, nil, &out)
	return out.Replay, AsDomain(err)
}

// DryRun dry-runs a watch (POST /sentinels?dryRun=true); nothing is
// created. An empty SessionID is filled with callerSession.
func (s Sentinels) DryRun(ctx context.Context, req sentinel.WatchRequest, callerSession string) (api.DryRun, error) {
	if req.SessionID == "" {
		req.SessionID = callerSession
	}
	if req.SessionID == "" {
		return api.DryRun{}, sentinel.Errorf(sentinel.CodeNoCallerIdentity,
			"no sessionId given and the caller has no session identity; pass sessionId (or start the bridge with --session)")
	}
	return s.CreateDryRun(ctx, req)
}

// CreateDryRun dry-runs a watch as it is given (POST
// /sentinels?dryRun=true): the node checks it, its sessionId included.
func (s Sentinels) CreateDryRun(ctx context.Context, req sentinel.WatchRequest) (api.DryRun, error) {
	var out api.DryRun
	err := s.C.Do(ctx, http.MethodPost, "/sentinels?dryRun=true", req, &out)
	return out, AsDomain(err)
}

var _ api.DryRunner = Sentinels{}

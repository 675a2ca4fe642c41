package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Journal implements api.Journal over the node's REST API (the stdio MCP
// bridge's sentinel_explain).
type Journal struct {
	C *Client
}

var _ api.Journal = Journal{}

// Decisions pages a sentinel's decisions (GET /sentinels/{id}/decisions).
func (j Journal) Decisions(ctx context.Context, sentinelID string, limit int, after uint64) (api.DecisionPage, error) {
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
	var out api.DecisionPage
	err := j.C.Do(ctx, http.MethodGet, path, nil, &out)
	return out, AsDomain(err)
}

// Event tells an event's story (GET /events/{eventId}).
func (j Journal) Event(ctx context.Context, eventID string) (api.EventStory, error) {
	var out struct {
		Event api.EventStory `json:"event"`
	}
	err := j.C.Do(ctx, http.MethodGet, "/events/"+url.PathEscape(eventID), nil, &out)
	return out.Event, AsDomain(err)
}

// Replay re-runs a parked event (POST /parked/{id}/replay?force=).
func (j Journal) Replay(ctx context.Context, parkID string, force bool) (api.Replay, error) {
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
	var out api.DryRun
	err := s.C.Do(ctx, http.MethodPost, "/sentinels?dryRun=true", req, &out)
	return out, AsDomain(err)
}

var _ api.DryRunner = Sentinels{}

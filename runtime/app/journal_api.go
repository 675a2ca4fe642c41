package app

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// explainerAPI adapts the decision journal (and the pipeline, for replays)
// to api.Explainer.
type explainerAPI struct {
	journal   *journal.Journal
	sentinels *sentinels.Service
	park      *park.Store
	pipeline  *deliver.Pipeline
}

func (a explainerAPI) Decisions(ctx context.Context, sentinelID string, limit int, after uint64) (sentinel.DecisionPage, error) {
	page, err := a.journal.Sentinel(ctx, sentinelID, limit, after)
	if err != nil {
		return sentinel.DecisionPage{}, err
	}
	if len(page.Decisions) == 0 && after == 0 {
		// Neither journaled nor known: an unknown id, not an empty history.
		if _, err := a.sentinels.Get(ctx, sentinelID); err != nil {
			return sentinel.DecisionPage{}, err
		}
	}
	return page, nil
}

func (a explainerAPI) Event(ctx context.Context, eventID string) (api.EventStory, error) {
	entries, err := a.journal.Event(ctx, eventID)
	if err != nil {
		return api.EventStory{}, err
	}
	if len(entries) == 0 {
		return api.EventStory{}, sentinel.Errorf(sentinel.CodeEventNotFound, "the journal holds no decision about event %q (unknown, or older than journal.max_age)", eventID)
	}
	first := entries[0]
	story := api.EventStory{EventID: first.EventID, Subject: first.Subject, Type: first.Type, Time: first.Time,
		Summary: first.Summary, Source: first.Source, Provider: first.Provider, Terminal: first.Terminal,
		SelfCaused: first.SelfCaused, Received: first.Ts, Decisions: entries}
	return story, nil
}

// Replay re-runs a parked sentinel event (deliver.Pipeline.Replay).
func (a explainerAPI) Replay(ctx context.Context, parkID string, force bool) (api.Replay, error) {
	rec, err := a.park.Get(ctx, parkID)
	if err != nil {
		return api.Replay{}, err
	}
	if rec.Event == nil || rec.SentinelID == "" {
		return api.Replay{}, sentinel.Errorf(sentinel.CodeNotReplayable, "parked record %s holds no sentinel event (a follow digest or a malformed provider item): nothing to replay", parkID)
	}
	res, err := a.pipeline.Replay(ctx, rec.SentinelID, rec.Event, rec.ID, force)
	if err != nil {
		return api.Replay{}, err
	}
	return api.Replay{ParkID: rec.ID, SentinelID: rec.SentinelID, EventID: rec.Event.ID, Decision: res.Decision,
		Reason: res.Reason, Session: res.Session, MessageID: res.MessageID}, nil
}

package app

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/journal"
)

// journalAPI adapts the decision journal (and the pipeline, for replays)
// to api.Journal. It reads the node's components at call time: the MCP
// surface is wired before the pipeline exists.
type journalAPI struct{ a *App }

func decisionOf(e journal.Entry) api.Decision { return api.Decision(e) }

func (a journalAPI) Decisions(ctx context.Context, sentinelID string, limit int, after uint64) (api.DecisionPage, error) {
	page, err := a.a.Journal.Sentinel(ctx, sentinelID, limit, after)
	if err != nil {
		return api.DecisionPage{}, err
	}
	if len(page.Decisions) == 0 && after == 0 {
		// Neither journaled nor known: an unknown id, not an empty history.
		if _, err := a.a.Sentinels.Get(ctx, sentinelID); err != nil {
			return api.DecisionPage{}, err
		}
	}
	out := api.DecisionPage{Decisions: make([]api.Decision, 0, len(page.Decisions)), Next: page.Next}
	for _, e := range page.Decisions {
		out.Decisions = append(out.Decisions, decisionOf(e))
	}
	return out, nil
}

func (a journalAPI) Event(ctx context.Context, eventID string) (api.EventStory, error) {
	entries, err := a.a.Journal.Event(ctx, eventID)
	if err != nil {
		return api.EventStory{}, err
	}
	if len(entries) == 0 {
		return api.EventStory{}, sentinel.Errorf(sentinel.CodeEventNotFound, "the journal holds no decision about event %q (unknown, or older than journal.max_age)", eventID)
	}
	first := entries[0]
	story := api.EventStory{EventID: first.EventID, Subject: first.Subject, Type: first.Type, Time: first.Time,
		Summary: first.Summary, Source: first.Source, Provider: first.Provider, Terminal: first.Terminal,
		SelfCaused: first.SelfCaused, Received: first.Ts, Decisions: make([]api.Decision, 0, len(entries))}
	for _, e := range entries {
		story.Decisions = append(story.Decisions, decisionOf(e))
	}
	return story, nil
}

// Replay re-runs a parked sentinel event (deliver.Pipeline.Replay).
func (a journalAPI) Replay(ctx context.Context, parkID string, force bool) (api.Replay, error) {
	rec, err := a.a.Park.Get(ctx, parkID)
	if err != nil {
		return api.Replay{}, err
	}
	if rec.Event == nil || rec.SentinelID == "" {
		return api.Replay{}, sentinel.Errorf(sentinel.CodeNotReplayable, "parked record %s holds no sentinel event (a follow digest or a malformed provider item): nothing to replay", parkID)
	}
	res, err := a.a.Workers.Pipeline.Replay(ctx, rec.SentinelID, rec.Event, rec.ID, force)
	if err != nil {
		return api.Replay{}, err
	}
	return api.Replay{ParkID: rec.ID, SentinelID: rec.SentinelID, EventID: rec.Event.ID, Decision: res.Decision,
		Reason: res.Reason, Session: res.Session, MessageID: res.MessageID}, nil
}

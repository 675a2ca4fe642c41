package subscriptions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/pause"
)

// Sentinels is what a subscription needs of the sentinel service.
type Sentinels interface {
	CreateSpec(ctx context.Context, spec sentinel.Spec) (*sentinel.Sentinel, error)
	Get(ctx context.Context, id string) (*sentinel.Sentinel, error)
	Remove(ctx context.Context, id string) error
}

// Service serves the events/* methods. Params are the raw JSON-RPC params;
// results are JSON-encodable values; errors are *sentinel.Error with the
// MCP Events codes (root errors.go) or plain errors (internal). Build it
// with New.
type Service struct {
	cfg       Config
	store     *Store
	feed      *Feed
	cursors   *Cursors
	sentinels Sentinels
	// cadence is the node's poll cadence, answered as nextPollMs.
	cadence func() int64
	// webhooks, when set, offers webhook delivery (events/subscribe).
	webhooks *Webhooks
	log      *slog.Logger
	now      func() time.Time
	// pause holds the named pause points (tests; nil in production):
	// PointRecreated.
	pause *pause.Points
}

// Default and maximum maxEvents of a poll.
const (
	DefaultMaxEvents = 100
	MaxMaxEvents     = 1000
)

// Occurrence is the SEP's EventOccurrence: the event's data is the
// SentinelEvent envelope.
type Occurrence struct {
	EventID   string          `json:"eventId"`
	Name      string          `json:"name"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	Cursor    *string         `json:"cursor,omitempty"`
}

// PollResult is the events/poll result.
type PollResult struct {
	ResultType string       `json:"resultType"`
	Events     []Occurrence `json:"events"`
	Cursor     *string      `json:"cursor"`
	Truncated  bool         `json:"truncated"`
	HasMore    bool         `json:"hasMore"`
	NextPollMs int64        `json:"nextPollMs"`
}

// ListResult is the events/list result.
type ListResult struct {
	ResultType string      `json:"resultType"`
	Events     []EventType `json:"events"`
}

// subParams are the params every subscription method shares.
type subParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    *string         `json:"cursor"`
	MaxAgeMs  *int64          `json:"maxAgeMs"`
	MaxEvents *int            `json:"maxEvents"`
}

// resolved is a validated subscription request.
type resolved struct {
	subParams
	Resolved
	bind      Bind
	after     uint64
	hasCursor bool
}

// List answers events/list (one page: there is no nextCursor).
func (s *Service) List(_ context.Context, raw json.RawMessage) (any, error) {
	if err := checkKeys(raw, "cursor", "_meta"); err != nil {
		return nil, err
	}
	return ListResult{ResultType: "complete", Events: Catalogue(s.webhooks != nil)}, nil
}

// resolve decodes and validates params (allowed names the accepted keys
// beyond name, arguments, cursor, maxAgeMs and _meta).
func (s *Service) resolve(ctx context.Context, principal string, raw json.RawMessage, allowed ...string) (*resolved, error) {
	if err := checkKeys(raw, append([]string{"name", "arguments", "cursor", "maxAgeMs", "_meta"}, allowed...)...); err != nil {
		return nil, err
	}
	r := &resolved{}
	if err := json.Unmarshal(raw, &r.subParams); err != nil {
		return nil, sentinel.Errorf(sentinel.CodeInvalidInput, "params do not match the method's shape: %s", jsonProblem(err))
	}
	if r.Name == "" {
		return nil, sentinel.Errorf(sentinel.CodeInvalidInput, "params.name is required (see events/list)")
	}
	var err error
	if r.Resolved, err = Resolve(r.Name, r.Arguments); err != nil {
		return nil, err
	}
	if r.MaxAgeMs != nil && *r.MaxAgeMs < 0 {
		return nil, sentinel.Errorf(sentinel.CodeInvalidInput, "maxAgeMs must not be negative")
	}
	r.bind = BindOf(principal, r.Name, r.Canonical)
	if r.Cursor != nil && *r.Cursor != "" {
		if r.after, err = s.cursors.Verify(ctx, *r.Cursor, r.bind); err != nil {
			return nil, err
		}
		r.hasCursor = true
	}
	return r, nil
}

// Poll answers events/poll: a null cursor bootstraps (no events, the
// current position); a cursor returns the events after it.
func (s *Service) Poll(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	r, err := s.resolve(ctx, principal, raw, "maxEvents")
	if err != nil {
		return nil, err
	}
	max := DefaultMaxEvents
	if r.MaxEvents != nil {
		if *r.MaxEvents < 1 || *r.MaxEvents > MaxMaxEvents {
			return nil, sentinel.Errorf(sentinel.CodeInvalidInput, "maxEvents must be within 1..%d", MaxMaxEvents)
		}
		max = *r.MaxEvents
	}
	id := SubscriptionID(sentinel.ModePoll, principal, "", r.Name, r.Canonical)
	rec, created, err := s.ensure(ctx, &Record{ID: id, Mode: sentinel.ModePoll, Name: r.Name, Arguments: r.Canonical, Principal: principal}, r, nil)
	if err != nil {
		return nil, err
	}
	res := PollResult{ResultType: "complete", Events: []Occurrence{}, NextPollMs: s.nextPollMs()}
	first, last, err := s.feed.Head(ctx)
	if err != nil {
		return nil, err
	}
	if !r.hasCursor {
		pos := last
		if created {
			pos = rec.CreatedSeq
		}
		return s.finishPoll(ctx, res, pos, r.bind)
	}
	start, truncated := startOf(r.after, rec.CreatedSeq, first, last)
	evs, skipped, more, err := s.feed.Read(ctx, rec.Mode, rec.ID, start, max, s.floor(r.MaxAgeMs))
	if err != nil {
		return nil, err
	}
	pos := max64(start, last)
	size := 0
	for i, e := range evs {
		occ := occurrence(r.Name, e)
		// One answer stays under MaxPayloadBytes: the rest is the next
		// poll's (hasMore).
		if size += len(occ.Data) + 512; i > 0 && size > MaxPayloadBytes {
			evs, more = evs[:i], true
			break
		}
		res.Events = append(res.Events, occ)
		pos = max64(pos, e.Seq)
	}
	if more {
		pos = evs[len(evs)-1].Seq
	}
	// A sentinel created by this call did not watch while the cursor's
	// client was away: events may have been missed.
	res.Truncated = truncated || skipped || created
	res.HasMore = more
	return s.finishPoll(ctx, res, pos, r.bind)
}

func (s *Service) finishPoll(ctx context.Context, res PollResult, pos uint64, b Bind) (any, error) {
	c, err := s.cursors.Sign(ctx, pos, b)
	if err != nil {
		return nil, err
	}
	res.Cursor = &c
	return res, nil
}

// startOf returns where reading after a client's position begins and
// whether events may have been skipped: the subscription did not exist
// yet at the position (it lapsed, or the cursor is from another mode: the
// feed after it is replayed all the same), or
// retention dropped stream events after it, or it is past the head.
func startOf(after, createdSeq, first, last uint64) (uint64, bool) {
	switch {
	case after > last:
		return last, true
	case after < createdSeq:
		// Replay what the feed holds after it (an earlier incarnation
		// of the same key stored it), but events may have been missed.
		return after, true
	case after+1 < first:
		return after, true
	}
	return after, false
}

func (s *Service) floor(maxAgeMs *int64) time.Time {
	if maxAgeMs == nil {
		return time.Time{}
	}
	return s.now().Add(-time.Duration(*maxAgeMs) * time.Millisecond)
}

func (s *Service) nextPollMs() int64 {
	if s.cadence != nil {
		if ms := s.cadence(); ms > 0 {
			return ms
		}
	}
	return 15000
}

func occurrence(name string, e stored) Occurrence {
	ts := e.Ev.Time
	if ts == "" {
		ts = sentinel.FormatTime(e.Time)
	}
	return Occurrence{EventID: e.Ev.ID, Name: name, Timestamp: ts, Data: clipEvent(&e.Ev)}
}

// MaxPayloadBytes bounds every delivered payload: a webhook POST body,
// a stream notification, one poll answer (ChatGPT, the shipping MCP
// Events client, refuses more than 256 KiB). MaxEventBytes is what one
// event's data may take of it, leaving room for the envelope (event id,
// name, timestamp, signed cursor, JSON-RPC framing).
const (
	MaxPayloadBytes = 256 << 10
	MaxEventBytes   = MaxPayloadBytes - 8<<10
)

// clipEvent encodes the event to fit MaxEventBytes: the whole event when
// it fits; else the event with its data replaced by a note saying it was
// clipped (truncated, the reason, the size it had); else an identity stub
// (id, type, subject, a clipped summary, truncated). A client that needs
// what was clipped fetches it with the tools.
func clipEvent(ev *sentinel.Event) json.RawMessage {
	raw, err := json.Marshal(ev)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	if len(raw) <= MaxEventBytes {
		return raw
	}
	cp := *ev
	note, _ := json.Marshal(map[string]any{"truncated": true, "originalBytes": len(raw),
		"reason": fmt.Sprintf("the event was %d bytes, over the %d-byte payload cap: its data was left out; read the subject with the tools for the rest", len(raw), MaxPayloadBytes)})
	cp.Data = note
	if out, err := json.Marshal(&cp); err == nil && len(out) <= MaxEventBytes {
		return out
	}
	summary := ev.Summary
	if len(summary) > 4096 {
		summary = strings.ToValidUTF8(summary[:4096], "")
	}
	stub, _ := json.Marshal(map[string]any{"id": clipString(ev.ID, 256), "type": clipString(ev.Type, 256), "subject": clipString(ev.Subject, 1024),
		"summary": summary, "truncated": true, "originalBytes": len(raw)})
	return stub
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// ensure returns the subscription of base.ID, creating it (and the
// sentinel behind it) when absent and re-creating the sentinel when it was
// removed; touch, when set, updates the record (it runs on every call,
// with the record as stored). created reports a new sentinel.
func (s *Service) ensure(ctx context.Context, base *Record, r *resolved, touch func(*Record)) (*Record, bool, error) {
	now := s.now().UnixMilli()
	for attempt := 0; attempt < 3; attempt++ {
		rec, err := s.store.Update(ctx, base.ID, func(rec *Record) error {
			rec.LastSeenMs = now
			if touch != nil {
				touch(rec)
			}
			return nil
		})
		if err == nil {
			if _, gerr := s.sentinels.Get(ctx, rec.SentinelID); gerr == nil {
				return rec, false, nil
			} else if !errors.Is(gerr, sentinel.ErrNotFound) && !isNotFound(gerr) {
				return nil, false, gerr
			}
			// The sentinel was removed (sentinel_unwatch): a new one.
			_, last, herr := s.feed.Head(ctx)
			if herr != nil {
				return nil, false, herr
			}
			sen, cerr := s.createSentinel(ctx, rec, r)
			if cerr != nil {
				return nil, false, cerr
			}
			if err := s.pause.At(ctx, PointRecreated, base.ID); err != nil {
				s.dropSentinel(ctx, sen.ID)
				return nil, false, err
			}
			// A compare on the sentinel it replaces: two calls re-creating
			// it at once (two nodes, two requests) keep the first one's and
			// drop the other's, instead of leaking it (issue 21, item 9).
			removed, lost := rec.SentinelID, false
			rec, err = s.store.Update(ctx, base.ID, func(rec *Record) error {
				if rec.SentinelID != removed {
					lost = true
					return errSkip
				}
				rec.SentinelID, rec.CreatedSeq = sen.ID, last
				return nil
			})
			if err != nil || lost {
				s.dropSentinel(ctx, sen.ID)
			}
			if err != nil {
				return nil, false, err
			}
			return rec, true, nil // new to this caller either way
		}
		if !errors.Is(err, sentinel.ErrNotFound) {
			return nil, false, err
		}
		if err := s.checkCapacity(ctx); err != nil {
			return nil, false, err
		}
		_, last, err := s.feed.Head(ctx)
		if err != nil {
			return nil, false, err
		}
		rec = base
		rec.CreatedSeq, rec.CreatedMs, rec.LastSeenMs = last, now, now
		if touch != nil {
			touch(rec)
		}
		sen, err := s.createSentinel(ctx, rec, r)
		if err != nil {
			return nil, false, err
		}
		rec.SentinelID = sen.ID
		if err := s.store.Create(ctx, rec); err != nil {
			s.dropSentinel(ctx, sen.ID)
			if errors.Is(err, sentinel.ErrConflict) {
				continue // another node created it first: use theirs
			}
			return nil, false, err
		}
		s.log.Info("mcp events subscription created", "subscription", rec.ID, "mode", rec.Mode, "event", rec.Name, "sentinel", sen.ID)
		return rec, true, nil
	}
	return nil, false, fmt.Errorf("subscription %s: could not be stored (contended)", base.ID)
}

// PointRecreated is reached (key: the subscription id) after a
// subscription's removed sentinel was created again and before the record
// points to it.
const PointRecreated pause.Point = "subscriptions.recreated"

func isNotFound(err error) bool {
	var se *sentinel.Error
	return errors.As(err, &se) && (se.Code == sentinel.CodeNotFound || se.Code == sentinel.CodeSentinelNotFound)
}

func (s *Service) createSentinel(ctx context.Context, rec *Record, r *resolved) (*sentinel.Sentinel, error) {
	spec := sentinel.Spec{
		Match:    r.Match,
		Until:    r.Until,
		Target:   sentinel.Target{Kind: sentinel.TargetMCPEvents, Mode: rec.Mode, SubscriptionID: rec.ID},
		Provider: r.Provider,
		Label:    "mcp-events " + rec.Name,
	}
	sen, err := s.sentinels.CreateSpec(ctx, spec)
	if err != nil {
		var se *sentinel.Error
		if errors.As(err, &se) && (strings.HasPrefix(se.Code, "invalid_") || se.Code == sentinel.CodeMissingSubject) {
			return nil, sentinel.Errorf(sentinel.CodeInvalidArguments, "arguments: %s", se.Message)
		}
		return nil, err
	}
	return sen, nil
}

// dropSentinel removes a sentinel best effort (on a context that outlives
// the request's).
func (s *Service) dropSentinel(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := s.sentinels.Remove(cctx, id); err != nil && !errors.Is(err, sentinel.ErrNotFound) && !isNotFound(err) {
		s.log.Warn("removing the sentinel of an mcp events subscription failed", "sentinel", id, "err", err)
	}
}

func (s *Service) checkCapacity(ctx context.Context) error {
	lister, err := s.store.kv.ListKeysFiltered(ctx, "sub.*")
	if err != nil {
		return fmt.Errorf("count subscriptions: %w", err)
	}
	n := 0
	for range lister.Keys() {
		n++
	}
	if n >= s.cfg.MaxSubscriptions {
		return sentinel.Errorf(sentinel.CodeTooManySubscriptions, "the server holds %d subscriptions, its limit", n)
	}
	return nil
}

// checkKeys refuses params keys outside allowed (params must be an object
// or absent).
func checkKeys(raw json.RawMessage, allowed ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "params must be a JSON object")
	}
	var unknown []string
	for k := range obj {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return sentinel.Errorf(sentinel.CodeInvalidInput, "unknown params %v (allowed: %v)", unknown, allowed)
	}
	return nil
}

// jsonProblem names the field of a decode error without echoing values.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%q must be a JSON %s", te.Field, te.Type.Kind())
	}
	return "malformed JSON"
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

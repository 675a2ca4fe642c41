package sessions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/pause"
)

// Inboxes is the inbox service: sends with a computed sender, reads and
// waits after a per-session read cursor (KV), and the notify hook on every
// stored message.
type Inboxes struct {
	Inbox    *inbox.Inbox
	Registry *Registry
	Notifier *Notifier
	// Pause holds the named pause points (tests; nil in production):
	// PointNotify.
	Pause   *pause.Points
	cursors jetstream.KeyValue

	doneOnce sync.Once
	done     chan struct{}
}

// NewInboxes returns the inbox service, keeping read cursors in cursors
// (CursorsBucket).
func NewInboxes(cursors jetstream.KeyValue, ib *inbox.Inbox, reg *Registry, n *Notifier) *Inboxes {
	return &Inboxes{Inbox: ib, Registry: reg, Notifier: n, cursors: cursors, done: make(chan struct{})}
}

// Close closes Done (streams end). Idempotent.
func (s *Inboxes) Close() { s.doneOnce.Do(func() { close(s.done) }) }

// Done is closed when the service stops.
func (s *Inboxes) Done() <-chan struct{} { return s.done }

// PointNotify is reached (key: the message id) after a message was stored
// and before its notify hook is handed on: a Fail there is a crash between
// the two.
const PointNotify pause.Point = "sessions.notify"

// Append stores msg and hands it to the notify hook, when it is new and
// when it was already stored (issue 21, item 7): a node that died between
// its inbox write and the hand-over left the message's wake-up undone, and
// the redelivery that finds the message stored is the only one left to do
// it. The notifier runs a message's hook once per node (Notifier.Notify)
// and a home node's job is stored once per message id within its window,
// so a repeat costs at most one more wake-up, never a lost one.
func (s *Inboxes) Append(ctx context.Context, msg sentinel.Message) (sentinel.Message, bool, error) {
	stored, dup, err := s.Inbox.Append(ctx, msg)
	if err != nil {
		return sentinel.Message{}, false, err
	}
	if err := s.Pause.At(ctx, PointNotify, stored.ID); err != nil {
		return sentinel.Message{}, false, err
	}
	s.Notifier.Notify(stored)
	return stored, dup, nil
}

// Sender is who sends a message: a session (Session), a named token
// (Principal: the message is labelled with it, never as from a human), or
// neither (the operator, a human API caller).
type Sender struct {
	Session   string
	Principal string
}

// Send stores a message from sender in to's inbox. The relation of a
// sending session is computed from the registry: parent when it is the
// recipient's parent, child when it is the recipient's child, else
// sibling.
func (s *Inboxes) Send(ctx context.Context, to string, in sentinel.SendMessage, sender Sender) (sentinel.Message, error) {
	if !sentinel.ValidSessionID(to) {
		return sentinel.Message{}, sentinel.Errorf(sentinel.CodeInvalidSessionID, "session id %q must be "+sentinel.SessionIDRule, to)
	}
	if in.Text == "" {
		return sentinel.Message{}, sentinel.Errorf(sentinel.CodeInvalidInput, "text is required")
	}
	if in.ReplyTo != "" && !ValidReplyTo(in.ReplyTo) {
		return sentinel.Message{}, sentinel.Errorf(sentinel.CodeInvalidReplyTo, "replyTo %q must be a message id: %s", in.ReplyTo, replyToRule)
	}
	if len(in.Data) > 0 {
		var obj map[string]any
		if json.Unmarshal(in.Data, &obj) != nil {
			return sentinel.Message{}, sentinel.Errorf(sentinel.CodeInvalidInput, "data must be a JSON object")
		}
	}
	from, err := s.from(ctx, to, sender.Session)
	if err != nil {
		return sentinel.Message{}, err
	}
	if sender.Principal != "" {
		from.Principal = sender.Principal
		if from.Relation == inbox.RelationHuman {
			from.Relation, from.Label = inbox.RelationPrincipal, sender.Principal
		}
	}
	kind := in.Kind
	if kind == "" {
		kind = inbox.KindReport
	}
	urgency := in.Urgency
	if urgency == "" {
		urgency = sentinel.UrgencyNextTurn
		if kind == inbox.KindBlocker || kind == inbox.KindQuestion {
			urgency = sentinel.UrgencySteer
		}
	}
	msg := sentinel.Message{
		ID: newMessageID(), Ts: sentinel.FormatTime(s.Registry.Now()), To: to, From: from, Kind: kind, Urgency: urgency,
		ReplyTo: in.ReplyTo, Text: in.Text, Data: in.Data, Source: "api",
	}
	msg.CorrelationID = firstNonEmpty(in.CorrelationID, in.ReplyTo, msg.ID)
	if sender.Session != "" {
		msg.Origin = sender.Session
	}
	stored, _, err := s.Append(ctx, msg)
	return stored, err
}

// replyToRule states the replyTo grammar.
const replyToRule = "1-128 characters of [A-Za-z0-9_-]"

// ValidReplyTo reports whether v may be a message's replyTo: a message id
// token (replyToRule). It reaches harness renderings as an attribute, so
// nothing else is stored.
func ValidReplyTo(v string) bool {
	if v == "" || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func (s *Inboxes) from(ctx context.Context, to, caller string) (sentinel.MessageFrom, error) {
	if caller == "" {
		return sentinel.MessageFrom{Relation: inbox.RelationHuman}, nil
	}
	if !sentinel.ValidSessionID(caller) {
		return sentinel.MessageFrom{}, sentinel.Errorf(sentinel.CodeInvalidSessionID, "caller session id %q is invalid", caller)
	}
	from := sentinel.MessageFrom{Relation: inbox.RelationSibling, SessionID: caller}
	cs, err := s.Registry.Lookup(ctx, caller)
	if err != nil {
		return sentinel.MessageFrom{}, err
	}
	if cs != nil {
		from.Label = cs.Label
		if cs.ParentSessionID == to {
			from.Relation = inbox.RelationChild
			return from, nil
		}
	}
	ts, err := s.Registry.Lookup(ctx, to)
	if err != nil {
		return sentinel.MessageFrom{}, err
	}
	if ts != nil && ts.ParentSessionID == caller {
		from.Relation = inbox.RelationParent
	}
	return from, nil
}

func newMessageID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// Read returns a page of messages without waiting.
func (s *Inboxes) Read(ctx context.Context, q sentinel.InboxQuery) ([]sentinel.Message, uint64, error) {
	iq, err := s.query(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	msgs, next, err := s.Inbox.Read(ctx, iq)
	if err != nil {
		return nil, 0, err
	}
	return msgs, next, s.ack(ctx, q, msgs, next)
}

// Wait returns at once when a match is there, else waits up to timeout
// for one; an empty page means it timed out.
func (s *Inboxes) Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) ([]sentinel.Message, uint64, error) {
	iq, err := s.query(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	msgs, next, err := s.Inbox.Wait(ctx, iq, timeout)
	if err != nil {
		return nil, 0, err
	}
	return msgs, next, s.ack(ctx, q, msgs, next)
}

func (s *Inboxes) query(ctx context.Context, q sentinel.InboxQuery) (inbox.Query, error) {
	if !sentinel.ValidSessionID(q.SessionID) {
		return inbox.Query{}, sentinel.Errorf(sentinel.CodeInvalidSessionID, "session id %q must be "+sentinel.SessionIDRule, q.SessionID)
	}
	if q.Limit < 0 || q.Limit > 500 {
		return inbox.Query{}, sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be within 1..500")
	}
	iq := inbox.Query{SessionID: q.SessionID, Limit: q.Limit, CorrelationID: q.CorrelationID}
	if q.After != nil {
		iq.After = *q.After
		return iq, nil
	}
	c, err := s.NamedCursor(ctx, q.SessionID, q.Cursor)
	if err != nil {
		return inbox.Query{}, err
	}
	iq.After = c
	return iq, nil
}

// ack advances the read cursor past the page: to the last returned
// message when the page was cut by the limit, else to next.
func (s *Inboxes) ack(ctx context.Context, q sentinel.InboxQuery, msgs []sentinel.Message, next uint64) error {
	if !q.Ack || q.CorrelationID != "" || len(msgs) == 0 {
		return nil
	}
	return s.AdvanceNamed(ctx, q.SessionID, q.Cursor, msgs[len(msgs)-1].Seq)
}

// Cursor returns the session's read cursor (0 when never set).
func (s *Inboxes) Cursor(ctx context.Context, id string) (uint64, error) {
	return s.NamedCursor(ctx, id, "")
}

// NamedCursor returns the session's cursor of that name ("" the read
// cursor; 0 when never set).
func (s *Inboxes) NamedCursor(ctx context.Context, id, name string) (uint64, error) {
	if name != "" && !sentinel.ValidCursorName(name) {
		return 0, sentinel.Errorf(sentinel.CodeInvalidInput, "cursor must be 1-32 of [a-z0-9_-] (a cursor name)")
	}
	e, err := s.cursors.Get(ctx, namedCursorKey(id, name))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read cursor of %s: %w", id, err)
	}
	n, err := strconv.ParseUint(string(e.Value()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("decode cursor of %s: %w", id, err)
	}
	return n, nil
}

// Advance moves the read cursor forward to seq; it never moves back.
func (s *Inboxes) Advance(ctx context.Context, id string, seq uint64) error {
	return s.AdvanceNamed(ctx, id, "", seq)
}

// AdvanceNamed moves the session's cursor of that name ("" the read
// cursor) forward to seq; it never moves back.
func (s *Inboxes) AdvanceNamed(ctx context.Context, id, name string, seq uint64) error {
	if name != "" && !sentinel.ValidCursorName(name) {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "cursor must be 1-32 of [a-z0-9_-] (a cursor name)")
	}
	key := namedCursorKey(id, name)
	for attempt := 0; attempt < 32; attempt++ {
		e, err := s.cursors.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
			_, err = s.cursors.Create(ctx, key, []byte(strconv.FormatUint(seq, 10)))
		case err != nil:
			return fmt.Errorf("read cursor of %s: %w", id, err)
		default:
			cur, _ := strconv.ParseUint(string(e.Value()), 10, 64)
			if cur >= seq {
				return nil
			}
			_, err = s.cursors.Update(ctx, key, []byte(strconv.FormatUint(seq, 10)), e.Revision())
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("store cursor of %s: %w", id, err)
		}
	}
	return fmt.Errorf("store cursor of %s: %w", id, sentinel.ErrConflict)
}

func cursorKey(id string) string { return "inbox." + id }

// namedCursorKey is the key of a session's named cursor:
// inbox.<session>.<name> (under inbox.>, so retention prunes it with the
// read cursors), the read cursor's for "".
func namedCursorKey(id, name string) string {
	if name == "" {
		return cursorKey(id)
	}
	return cursorKey(id) + "." + name
}

package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentproto/sentinel"
)

// SendMessage is the body of POST /sessions/{id}/messages. The sender is
// computed by the node, never taken from the caller.
type SendMessage struct {
	Text          string           `json:"text"`
	Kind          string           `json:"kind,omitempty"`
	Urgency       sentinel.Urgency `json:"urgency,omitempty"`
	CorrelationID string           `json:"correlationId,omitempty"`
	ReplyTo       string           `json:"replyTo,omitempty"`
	Data          json.RawMessage  `json:"data,omitempty"`
}

// InboxQuery selects messages of one inbox.
type InboxQuery struct {
	SessionID string
	// After is the exclusive sequence to read after; nil reads after the
	// session's read cursor.
	After         *uint64
	Limit         int
	CorrelationID string
	// Ack advances the read cursor past the returned page (only without a
	// correlation filter, so no unmatched message is skipped).
	Ack bool
	// Cursor names another cursor of the session to read after and
	// advance instead of its read cursor ("" the read cursor): a path that
	// delivers on its own (the Claude Code channel's "channel") keeps its
	// position without moving what the hooks inject. 1-32 of [a-z0-9_-].
	Cursor string
}

// InboxPage is one read of an inbox.
type InboxPage struct {
	Messages []sentinel.Message `json:"messages"`
	// Next is the sequence to pass as after next time.
	Next     uint64 `json:"next"`
	TimedOut bool   `json:"timedOut,omitempty"`
}

// Wait bounds of inbox_wait.
const (
	MinWait = time.Second
	MaxWait = 49 * time.Second
)

// StreamSlots caps the long-held requests of a node (inbox streams and
// long-polls, MCP inbox_wait calls, MCP Events streams), per key (a
// session id, or a principal's) and in all. Acquire takes a slot and
// returns its release (call it once); over a cap it returns an error with
// code too_many_streams.
type StreamSlots interface {
	Acquire(key string) (release func(), err error)
}

// Inboxes is the inbox service every surface calls.
type Inboxes interface {
	// Send stores a message in a session's inbox. callerSession is the
	// trusted identity of the sender ("" for a human API caller); the
	// relation is computed from the registry.
	Send(ctx context.Context, to string, req SendMessage, callerSession string) (sentinel.Message, error)
	// Read returns a page of messages, oldest first, without waiting.
	Read(ctx context.Context, q InboxQuery) (InboxPage, error)
	// Wait returns at once when a match is there, else waits up to
	// timeout (MinWait..MaxWait) for one; TimedOut reports an empty wait.
	Wait(ctx context.Context, q InboxQuery, timeout time.Duration) (InboxPage, error)
	// Done is closed when the node stops: streams end.
	Done() <-chan struct{}
}

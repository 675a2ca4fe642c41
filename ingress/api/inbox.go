package api

import (
	"context"
	"time"

	"github.com/agentproto/sentinel"
)

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
	Send(ctx context.Context, to string, req sentinel.SendMessage, callerSession string) (sentinel.Message, error)
	// Read returns a page of messages, oldest first, without waiting.
	Read(ctx context.Context, q sentinel.InboxQuery) (InboxPage, error)
	// Wait returns at once when a match is there, else waits up to
	// timeout (MinWait..MaxWait) for one; TimedOut reports an empty wait.
	Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) (InboxPage, error)
	// Done is closed when the node stops: streams end.
	Done() <-chan struct{}
}

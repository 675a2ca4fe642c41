package httpapi

import (
	"sync"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Default caps of open inbox streams and long-polls.
const (
	DefaultMaxStreams           = 256
	DefaultMaxStreamsPerSession = 8
)

// StreamLimiter counts the node's long-held requests, per key and in all,
// and refuses one over either cap: the inbox SSE streams and ?wait=
// long-polls (keyed by session), MCP inbox_wait calls (by session) and MCP
// Events streams (by principal), so none of them escapes the caps. The
// per-key cap keeps one session from taking the whole node-wide ceiling.
// It is safe for concurrent use; one is shared by every surface of a
// node.
type StreamLimiter struct {
	mu         sync.Mutex
	open       map[string]int
	total      int
	max, perID int
}

// NewStreamLimiter returns a limiter of maxAll open streams in all and
// perSession per key (the defaults when <= 0; perSession never above
// maxAll).
func NewStreamLimiter(maxAll, perSession int) *StreamLimiter {
	if maxAll <= 0 {
		maxAll = DefaultMaxStreams
	}
	if perSession <= 0 {
		perSession = DefaultMaxStreamsPerSession
	}
	return &StreamLimiter{open: map[string]int{}, max: maxAll, perID: min(perSession, maxAll)}
}

// Acquire opens one stream slot for the key (a session id, or a
// principal's events key); the returned release closes it (call it once;
// later calls do nothing). Over a cap it returns 429 too_many_streams.
func (l *StreamLimiter) Acquire(session string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open[session] >= l.perID:
		return nil, sentinel.Errorf(api.CodeTooManyStreams,
			"%s already has %d open streams or long-polls (max_streams_per_session); close one first", session, l.perID)
	case l.total >= l.max:
		return nil, sentinel.Errorf(api.CodeTooManyStreams,
			"the node already serves %d open streams or long-polls (max_streams); retry later", l.max)
	}
	l.open[session]++
	l.total++
	var once sync.Once
	return func() { once.Do(func() { l.release(session) }) }, nil
}

func (l *StreamLimiter) release(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[session]--; l.open[session] <= 0 {
		delete(l.open, session)
	}
}

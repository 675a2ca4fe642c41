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

// streamLimiter counts the open SSE streams and ?wait= long-polls, per
// session and in all, and refuses one over either cap. Every caller holds
// the one node token, so the per-session cap keeps one session from
// taking the whole node-wide ceiling. It is safe for concurrent use.
type streamLimiter struct {
	mu         sync.Mutex
	open       map[string]int
	total      int
	max, perID int
}

func newStreamLimiter(maxAll, perSession int) *streamLimiter {
	if maxAll <= 0 {
		maxAll = DefaultMaxStreams
	}
	if perSession <= 0 {
		perSession = DefaultMaxStreamsPerSession
	}
	return &streamLimiter{open: map[string]int{}, max: maxAll, perID: min(perSession, maxAll)}
}

// acquire opens one stream slot for the session; the returned release
// closes it (call it once). Over a cap it returns 429 too_many_streams.
func (l *streamLimiter) acquire(session string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open[session] >= l.perID:
		return nil, sentinel.Errorf(api.CodeTooManyStreams,
			"session %s already has %d open inbox streams or long-polls (max_streams_per_session); close one first", session, l.perID)
	case l.total >= l.max:
		return nil, sentinel.Errorf(api.CodeTooManyStreams,
			"the node already serves %d open inbox streams or long-polls (max_streams); retry later", l.max)
	}
	l.open[session]++
	l.total++
	var once sync.Once
	return func() { once.Do(func() { l.release(session) }) }, nil
}

func (l *streamLimiter) release(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.open[session]--; l.open[session] <= 0 {
		delete(l.open, session)
	}
}

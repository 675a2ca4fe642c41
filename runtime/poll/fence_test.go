package poll_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// stalledPoller returns its first poll's result only when released: the
// poll was taken at the old cursor, and its owner paused before writing.
type stalledPoller struct {
	*fake.Provider
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (s *stalledPoller) Poll(ctx context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	res, err := s.Provider.Poll(ctx, h, limit)
	first := false
	s.once.Do(func() { first = true })
	if first {
		s.entered <- struct{}{}
		<-s.release
	}
	return res, err
}

// A poll owner that lost its lease mid-poll (a pause) cannot move the
// cursor back over its successor's, and does not ack the provider.
func TestStalePollOwnerCannotMoveTheCursorBack(t *testing.T) {
	sp := &stalledPoller{Provider: fake.New(fake.Config{Slug: "stall"}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{sp}})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "stall"})
	sp.Emit(runtimetest.Event("evt_1", "x.y.z", pr, false))

	stale := make(chan struct{})
	go func() { defer close(stale); e.Loop.PollNow(context.Background()) }()
	<-sp.entered // the stale owner polled at cursor "" and got cursor "1"

	// Its successor polls twice meanwhile: the cursor moves to "2".
	successor := e.NewLoop()
	successor.PollNow(context.Background())
	sp.Emit(runtimetest.Event("evt_2", "x.y.z", pr, false))
	successor.PollNow(context.Background())
	require.Equal(t, "2", e.Get(rec.ID).Handle.Cursor)

	close(sp.release)
	<-stale
	require.Equal(t, "2", e.Get(rec.ID).Handle.Cursor, "the stale owner's older cursor is not written")
	require.Equal(t, []string{"1", "2"}, sp.Acks(), "the stale owner does not ack")
	msgs := e.WaitInbox("s1", 2)
	require.Len(t, msgs, 2, "each event once")
}

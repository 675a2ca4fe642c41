package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/sentinels"
)

// ErrNoSilencedRead is Silenced.NextMsg's error when no read was silenced
// within its wait.
var ErrNoSilencedRead = errors.New("runtimetest: no leader read was silenced")

// Silenced receives the leader reads SilentLeader took and never answered.
type Silenced struct {
	reads chan string
}

// NextMsg waits (at most d) for the next silenced read and returns the
// record id it asked for.
func (s *Silenced) NextMsg(d time.Duration) (string, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case id := <-s.reads:
		return id, nil
	case <-t.C:
		return "", fmt.Errorf("%w within %s", ErrNoSilencedRead, d)
	}
}

// SilentLeader makes e's record reads through the bucket's leader go, for
// as long as silent says so, where a subscriber takes them and never
// answers: a leader just SIGKILLed, whose successor is not elected yet
// (the live servers answer nothing and send no "no responders"). Other
// reads go to the leader as before. One server's JetStream API answers
// every stream name, so bus.LeaderLast itself cannot be pointed at a
// silent leader; the read is the same kind of NATS request. The returned
// Silenced receives each silenced read: NextMsg waits for one. e must
// read through the leader (Options.LeaderReads).
func (e *Env) SilentLeader(t testing.TB, silent func() bool) *Silenced {
	t.Helper()
	if !e.leaderReads {
		t.Fatal("runtimetest: SilentLeader needs an env started with Options.LeaderReads")
	}
	b := e.Bus.Bus
	const subject = "test.dead-leader.msg-get"
	s := &Silenced{reads: make(chan string, 64)}
	stop, err := b.Serve(subject, func(data []byte, _ func([]byte)) {
		select {
		case s.reads <- string(data):
		default: // the test reads fewer than it silenced
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = stop() })
	live := sentinels.BusLeaderGet(b)
	read := leaderGet(func(ctx context.Context, id string) ([]byte, uint64, error) {
		if silent() {
			_, err := b.Request(ctx, subject, []byte(id))
			return nil, 0, err
		}
		return live(ctx, id)
	})
	e.leaderRead.Store(&read)
	return s
}

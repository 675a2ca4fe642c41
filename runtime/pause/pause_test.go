package pause_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/pause"
)

const p1, p2 pause.Point = "test.one", "test.two"

func TestNilPointsHoldNothing(t *testing.T) {
	var p *pause.Points
	require.NoError(t, p.At(context.Background(), p1, "k"))
}

func TestHoldHoldsTheFirstArrivalOfItsKeyUntilRelease(t *testing.T) {
	p := pause.New()
	h := p.Hold(p1, "k")
	require.NoError(t, p.At(context.Background(), p1, "other"), "another key passes")
	require.NoError(t, p.At(context.Background(), p2, "k"), "another point passes")
	done := make(chan error, 1)
	go func() { done <- p.At(context.Background(), p1, "k") }()
	<-h.Reached()
	select {
	case <-done:
		t.Fatal("the held goroutine went on before Release")
	default:
	}
	require.NoError(t, p.At(context.Background(), p1, "k"), "a second arrival passes")
	h.Release()
	require.NoError(t, <-done)
	require.Equal(t, 2, h.Count())
}

func TestAHeldGoroutineGoesOnWhenItsContextEnds(t *testing.T) {
	p := pause.New()
	p.Hold(p1, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, p.At(ctx, p1, "k"), context.DeadlineExceeded)
}

func TestWatchCountsWithoutHolding(t *testing.T) {
	p := pause.New()
	w := p.Watch(p1, "")
	for range 3 {
		require.NoError(t, p.At(context.Background(), p1, "k"))
	}
	require.Equal(t, 3, w.Count())
	<-w.Reached()
	<-w.Arrived()
}

func TestFailInjectsItsErrorTheGivenNumberOfTimes(t *testing.T) {
	p := pause.New()
	boom := errors.New("boom")
	p.Fail(p1, "k", 2, boom)
	require.ErrorIs(t, p.At(context.Background(), p1, "k"), boom)
	require.ErrorIs(t, p.At(context.Background(), p1, "k"), boom)
	require.NoError(t, p.At(context.Background(), p1, "k"))
	p.Fail(p2, "", -1, nil)
	for range 3 {
		require.ErrorIs(t, p.At(context.Background(), p2, "x"), pause.ErrInjected)
	}
}

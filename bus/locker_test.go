package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

func TestLockHonoursItsDeadlineWhileAnotherHolds(t *testing.T) {
	env := bustest.Start(t)
	local := env.Bus.NewLocker("node-a")
	cases := []struct {
		name   string
		holder func() (func(), error)
	}{
		{"a holder on this node", func() (func(), error) { return local.Lock(context.Background(), "repo-1") }},
		{"a holder on another node", func() (func(), error) {
			return env.Bus.NewLocker("node-b").Lock(context.Background(), "repo-1")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			unlock, err := tc.holder()
			require.NoError(t, err)
			release := sync.OnceFunc(unlock)
			defer release()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				u, err := local.Lock(ctx, "repo-1")
				if err == nil {
					u()
				}
				done <- err
			}()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.DeadlineExceeded)
			case <-time.After(5 * time.Second):
				release() // let the stuck waiter through before failing
				t.Fatal("Lock ignored its deadline while the lock was held")
			}
		})
	}
}

func TestLockerForgetsNamesNobodyHoldsOrWaitsFor(t *testing.T) {
	env := bustest.Start(t)
	l := env.Bus.NewLocker("node-a")
	ctx := context.Background()
	for i := range 20 {
		unlock, err := l.Lock(ctx, fmt.Sprintf("repo-%d", i))
		require.NoError(t, err)
		require.Equal(t, 1, l.LocalLocks())
		unlock()
		unlock() // a second release is harmless
	}
	require.Zero(t, l.LocalLocks(), "released names are forgotten")

	// A waiter that gives up leaves nothing behind either.
	unlock, err := l.Lock(ctx, "busy")
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = l.Lock(wctx, "busy")
	require.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	require.Equal(t, 1, l.LocalLocks())
	unlock()
	require.Zero(t, l.LocalLocks())

	// The lock still excludes after its entry was recreated.
	unlock, err = l.Lock(ctx, "busy")
	require.NoError(t, err)
	defer unlock()
	wctx2, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	_, err = l.Lock(wctx2, "busy")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// A held lock outlives its bucket's TTL (its holder renews it), still
// excludes others all along, and frees when released; a lock whose holder
// died (no renewals) frees by itself after the TTL.
func TestHeldLocksAreRenewedDeadHoldersLapse(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	kv, err := env.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "test_locks", TTL: time.Second})
	require.NoError(t, err)
	a := bus.NewLockerOn(kv, "node-a", 200*time.Millisecond)
	b := bus.NewLockerOn(kv, "node-b", 200*time.Millisecond)

	unlock, err := a.Lock(ctx, "repo")
	require.NoError(t, err)
	held := time.Now()
	for time.Since(held) < 3*time.Second { // three TTLs
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := b.Lock(wctx, "repo")
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "the renewed lock still excludes after %s", time.Since(held))
	}
	unlock()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	unlockB, err := b.Lock(wctx, "repo")
	require.NoError(t, err, "released: the other node takes it")
	unlockB()

	// A holder that died: its key is never renewed, and lapses.
	_, err = kv.Create(ctx, "lock.dead", []byte("node-gone"))
	require.NoError(t, err)
	wctx2, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	unlockDead, err := a.Lock(wctx2, "dead")
	require.NoError(t, err, "a dead holder's lock frees after the TTL")
	unlockDead()
}

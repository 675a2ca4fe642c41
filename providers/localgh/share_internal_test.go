package localgh

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

func TestFetchShare(t *testing.T) {
	ctx := providers.WithTick(context.Background())
	s := shareOf(ctx)
	require.NotNil(t, s)
	require.Same(t, s, shareOf(ctx), "one share per tick")
	require.Nil(t, shareOf(context.Background()), "no tick, no share")

	var calls atomic.Int32
	fetch := func(err error) func() (*sharedFetch, error) {
		return func() (*sharedFetch, error) {
			calls.Add(1)
			return &sharedFetch{resp: &github.Response{Status: 200}, size: 10}, err
		}
	}

	t.Run("concurrent polls fetch once", func(t *testing.T) {
		calls.Store(0)
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, err := s.do(ctx, "a", fetch(nil))
				require.NoError(t, err)
				require.Equal(t, 200, f.resp.Status)
			}()
		}
		wg.Wait()
		require.Equal(t, int32(1), calls.Load())
	})
	t.Run("a GitHub error is shared", func(t *testing.T) {
		calls.Store(0)
		boom := errors.New("HTTP 502")
		for range 3 {
			_, err := s.do(ctx, "b", fetch(boom))
			require.ErrorIs(t, err, boom)
		}
		require.Equal(t, int32(1), calls.Load())
	})
	t.Run("a fetch whose poll ran out of time is not", func(t *testing.T) {
		calls.Store(0)
		for range 3 {
			_, err := s.do(ctx, "c", fetch(context.DeadlineExceeded))
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
		require.Equal(t, int32(3), calls.Load())
	})
	t.Run("bounded", func(t *testing.T) {
		for i := range maxSharedFetches + 100 {
			_, err := s.do(ctx, "k"+strconv.Itoa(i), fetch(nil))
			require.NoError(t, err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		require.LessOrEqual(t, len(s.m), maxSharedFetches)
		require.Len(t, s.order, len(s.m))
		require.Equal(t, 10*len(s.m), s.bytes)
		_, oldest := s.m["a"]
		require.False(t, oldest, "the oldest answers are let go first")
	})
}

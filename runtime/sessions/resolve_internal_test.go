package sessions

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResolverLocksAreDroppedWhenUnused: the per-session resume locks
// still serialize one session, and an entry lives only while the lock is
// held or awaited (the map used to keep one entry per session id ever
// resumed).
func TestResolverLocksAreDroppedWhenUnused(t *testing.T) {
	r := &Resolver{}
	var inside [4]atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				n := i % len(inside)
				unlock := r.lock(fmt.Sprintf("s%d", n))
				if inside[n].Add(1) != 1 {
					t.Error("two holders of one session's lock")
				}
				inside[n].Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(t, r.locks)
}

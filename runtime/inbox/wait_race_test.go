package inbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// TestWaitNeverMissesAMessageStoredWhileItStarts races a wait's start with
// the append it waits for: a message routed just before the wait's
// subscription existed, but stored just after its first read, must still
// be returned (the wait re-reads).
func TestWaitNeverMissesAMessageStoredWhileItStarts(t *testing.T) {
	env := bustest.Start(t)
	in := openInbox(t, env)
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		s := fmt.Sprintf("s%d", i)
		done := make(chan int, 1)
		go func() {
			m, _, err := in.Wait(ctx, inbox.Query{SessionID: s, CorrelationID: "c"}, 3*time.Second)
			if err != nil {
				t.Errorf("wait: %v", err)
			}
			done <- len(m)
		}()
		if i%3 == 0 {
			time.Sleep(time.Duration(i%7) * 100 * time.Microsecond)
		}
		if _, _, err := in.Append(ctx, msg(fmt.Sprintf("msg_%d", i), s, "c")); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if n := <-done; n != 1 {
			t.Fatalf("iteration %d: wait returned %d messages after %v", i, n, time.Since(start))
		}
	}
}

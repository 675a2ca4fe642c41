package inbox_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// TestReadSeesEveryAcknowledgedAppend: a read right after an append
// returned always sees the message (reads are next-by-subject gets, not a
// freshly created consumer).
func TestReadSeesEveryAcknowledgedAppend(t *testing.T) {
	env := bustest.Start(t)
	in := openInbox(t, env)
	ctx := context.Background()
	for i := 0; i < 300; i++ {
		s := fmt.Sprintf("s%d", i)
		if _, _, err := in.Append(ctx, msg(fmt.Sprintf("msg_%d", i), s, "c")); err != nil {
			t.Fatal(err)
		}
		m, _, err := in.Read(ctx, inbox.Query{SessionID: s, CorrelationID: "c"})
		if err != nil || len(m) != 1 {
			t.Fatalf("iteration %d: read %d messages, err %v", i, len(m), err)
		}
	}
}

package deliver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

func TestOpCosts(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	env := bustest.Start(t, bustest.WithSyncAlways(true))
	ctx := context.Background()
	b := env.Bus
	seen := env.KeyValue(t, sentinels.SeenBucket())
	inboxes := env.Stream(t, inbox.Stream(b.Cfg.InboxDuplicates, b.Cfg.InboxMaxAge))
	n := 200
	measure := func(name string, f func(i int)) {
		start := time.Now()
		for i := 0; i < n; i++ {
			f(i)
		}
		t.Logf("%s: %v/op", name, time.Since(start)/time.Duration(n))
	}
	measure("kv put", func(i int) { seen.Put(ctx, fmt.Sprintf("k%d", i), []byte("x")) })
	measure("kv get hit", func(i int) { seen.Get(ctx, fmt.Sprintf("k%d", i)) })
	measure("kv get miss", func(i int) { seen.Get(ctx, fmt.Sprintf("m%d", i)) })
	measure("publish event", func(i int) { b.PublishEvent(ctx, "sen_x", fmt.Sprintf("e%d", i), []byte("{}")) })
	measure("publish inbox", func(i int) {
		id := fmt.Sprintf("m%d", i)
		b.PublishOnce(ctx, inboxes, inbox.Subject("s", id), []byte("{}"), id)
	})
}

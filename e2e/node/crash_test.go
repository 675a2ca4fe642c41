package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// TestCrashMidFlowDeliversEveryEventExactlyOnce SIGKILLs the node at random
// points while the fake provider feeds 200 events, restarts it, and then
// reads the inbox stream straight from the store: every event is there
// exactly once, in order.
func TestCrashMidFlowDeliversEveryEventExactlyOnce(t *testing.T) {
	const total = 200
	home := t.TempDir()
	feed := filepath.Join(t.TempDir(), "feed.jsonl")
	var lines []string
	ref, _ := sentinel.ParseGitHubSubject("github:acme/widgets#7")
	for i := 0; i < total; i++ {
		ev := sentinel.NewEvent(fmt.Sprintf("evt_%03d", i), "//agentproto.local/sentinel/fake", "github.check_suite.completed",
			ref.Subject(), ref.Subjects(), time.Unix(1790000000+int64(i), 0), fmt.Sprintf("event %03d", i), false, map[string]any{"i": i})
		raw, err := json.Marshal(ev)
		require.NoError(t, err)
		lines = append(lines, string(raw))
	}
	require.NoError(t, os.WriteFile(feed, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	env := []string{
		"AGENTPROTO_TESTING_FAKE_FEED=" + feed,
		"AGENTPROTO_POLL_ACTIVE_INTERVAL=20ms",
		"AGENTPROTO_POLL_IDLE_INTERVAL=20ms",
		"AGENTPROTO_POLL_BATCH_LIMIT=7",
		"AGENTPROTO_DELIVERY_RETRY_BASE=20ms",
		"AGENTPROTO_DELIVERY_RETRY_MAX=200ms",
	}
	seed := time.Now().UnixNano()
	t.Logf("crash seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))

	n := startNode(t, home, env...)
	a := n.do("POST", "/sentinels", map[string]any{"subject": ref.Subject(), "types": []string{"*"}, "sessionId": "s1", "provider": "fake"}, n.token)
	require.Equal(t, 201, a.status, a.raw)
	id := a.body["sentinel"].(map[string]any)["id"].(string)

	for round := 0; round < 5; round++ {
		// A random crash point: the node is mid-flow (polling, publishing,
		// delivering, acking) at some moment in this window.
		<-time.After(time.Duration(30+rng.IntN(250)) * time.Millisecond)
		n.kill()
		n = startNode(t, home, env...)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		a = n.do("GET", "/sentinels/"+id, nil, n.token)
		if a.status == 200 && a.body["sentinel"].(map[string]any)["eventCount"].(float64) >= total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("eventCount did not reach %d: %s\n%s", total, a.raw, n.logs.String())
		}
		<-time.After(20 * time.Millisecond)
	}
	require.EqualValues(t, total, a.body["sentinel"].(map[string]any)["eventCount"], "counted once each")
	_, err := n.stop()
	require.NoError(t, err)

	msgs := readInbox(t, home, "s1")
	require.Len(t, msgs, total, "every event exactly once")
	for i, m := range msgs {
		var ev sentinel.Event
		require.NoError(t, json.Unmarshal(m.Data, &ev))
		require.Equal(t, fmt.Sprintf("evt_%03d", i), ev.ID, "message %d out of order or duplicated", i)
	}
}

// readInbox opens the stopped node's JetStream store directly and returns
// every message of the session's inbox.
func readInbox(t *testing.T, home, session string) []sentinel.Message {
	t.Helper()
	cfg := embedded.DefaultConfig()
	cfg.StoreDir = filepath.Join(home, "jetstream")
	srv, err := embedded.Start(cfg, nil)
	require.NoError(t, err)
	defer srv.Shutdown()
	nc, err := srv.Connect("e2e-reader")
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, inbox.StreamName)
	require.NoError(t, err)
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{inbox.Filter(session)}})
	require.NoError(t, err)
	var out []sentinel.Message
	for {
		batch, err := cons.FetchNoWait(100)
		require.NoError(t, err)
		got := 0
		for m := range batch.Messages() {
			got++
			var msg sentinel.Message
			require.NoError(t, json.Unmarshal(m.Data(), &msg))
			out = append(out, msg)
		}
		if got == 0 {
			return out
		}
	}
}

package cluster_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/e2e/e2etest"
)

// fakeFeed is the fake provider's JSON-lines feed file, shared by the
// nodes: every poll reads it whole.
type fakeFeed struct {
	path  string
	lines []string
}

// add appends events and replaces the file atomically, so a poll never
// reads half a line.
func (f *fakeFeed) add(t *testing.T, evs ...sentinel.Event) {
	t.Helper()
	for _, ev := range evs {
		raw, err := json.Marshal(ev)
		require.NoError(t, err)
		f.lines = append(f.lines, string(raw))
	}
	tmp := f.path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(strings.Join(f.lines, "\n")+"\n"), 0o600))
	require.NoError(t, os.Rename(tmp, f.path))
}

// feedEvent is a fake provider event on subject.
func feedEvent(id, subject string) sentinel.Event {
	ref, _ := sentinel.ParseGitHubSubject(subject)
	return sentinel.NewEvent(id, "//agentproto.local/sentinel/fake", "github.check_suite.completed", ref.Subject(), ref.Subjects(),
		time.Unix(1790000000, 0), "checks on "+subject+" ("+id+")", false, map[string]any{"id": id})
}

// TestExternalNATSNodeKilledOtherCarriesOn runs two nodes in external
// mode on one nats-server started by the test (loopback, JetStream, a
// client token): polled and pushed events reach every session; after one
// node is SIGKILLed the other takes over its sentinels' polls, keeps
// delivering every event once, in order, and takes writes.
func TestExternalNATSNodeKilledOtherCarriesOn(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("e2e-nats-token-", 3)
	srv, err := embedded.Start(embedded.Config{StoreDir: filepath.Join(t.TempDir(), "nats"), Listen: "127.0.0.1:-1", ListenToken: token,
		ServerName: "external", ReadyTimeout: 30 * time.Second}, nil)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	feed := &fakeFeed{path: filepath.Join(t.TempDir(), "feed.jsonl")}
	c := e2etest.StartCluster(t, binary, e2etest.ClusterOptions{Nodes: 2, NATSURL: srv.ClientURL(), NATSToken: token, Env: []string{
		"AGENTPROTO_TESTING_FAKE_FEED=" + feed.path,
		"AGENTPROTO_POLL_ACTIVE_INTERVAL=1s", "AGENTPROTO_POLL_IDLE_INTERVAL=1s",
		"AGENTPROTO_BUS_MEMBER_TTL=2s", "AGENTPROTO_BUS_LEASE_TTL=3s",
	}})

	// Eight sentinels on eight repositories: poll ownership spreads over
	// the two nodes by repository.
	const sentinels = 8
	subject := func(k int) string { return fmt.Sprintf("github:acme/r%d#1", k) }
	session := func(k int) string { return fmt.Sprintf("ext-s%d", k) }
	ids := make([]string, sentinels)
	for k := range sentinels {
		ids[k] = createSentinel(t, nodeAPI(t, c, k%2), map[string]any{"subject": subject(k), "types": []string{"*"}, "sessionId": session(k),
			"provider": "fake", "until": "never"})
	}
	want := make([][]string, sentinels)
	round := func(r int) {
		var evs []sentinel.Event
		for k := range sentinels {
			id := fmt.Sprintf("evt_ext_%d_%d", r, k)
			evs = append(evs, feedEvent(id, subject(k)))
			want[k] = append(want[k], id)
		}
		feed.add(t, evs...)
	}
	delivered := func(n api) {
		t.Helper()
		for k := range sentinels {
			inboxHolds(t, c, n, session(k), want[k], 60*time.Second)
		}
	}
	round(1)
	delivered(nodeAPI(t, c, 0))

	// SIGKILL the node that polls most; the other carries on.
	const series = `sentinel_poll_duration_seconds_count{provider="fake"}`
	before := make([]float64, 2)
	for i := range before {
		before[i], _ = metric(t, nodeAPI(t, c, i), series)
	}
	victim, most := -1, 0.0
	eventually(t, c, 30*time.Second, func() bool {
		for i := range before {
			now, _ := metric(t, nodeAPI(t, c, i), series)
			if now-before[i] > most {
				victim, most = i, now-before[i]
			}
		}
		return most >= 2
	}, "the nodes poll")
	survivor := nodeAPI(t, c, 1-victim)
	c.Kill(victim)
	t.Logf("killed %s", c.Node(victim).Name)
	polled, _ := metric(t, survivor, series)
	ans, err := fakePush(survivor.url, ids[0], fakeEnvelope(t, "evt_ext_push", subject(0)))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, ans.status, ans.raw)
	want[0] = append(want[0], "evt_ext_push")
	delivered(survivor)
	round(2)
	round(3)
	delivered(survivor)
	now, _ := metric(t, survivor, series)
	require.GreaterOrEqual(t, now-polled, float64(sentinels), "the survivor polls every sentinel")
	id := createSentinel(t, survivor, map[string]any{"subject": subject(sentinels), "types": []string{"*"}, "sessionId": session(sentinels), "provider": "fake"})
	require.Equal(t, http.StatusOK, survivor.do("DELETE", "/sentinels/"+id, nil).status, "the survivor takes writes")
}

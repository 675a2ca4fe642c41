package cluster_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

// partition is a network namespace of the test's own for one node, joined
// to the test's namespace by two veth pairs on a 10.x.y.0/29 the test
// picked unused: one carries the cluster's routes (cut and healed), the
// other the test's API requests to the node (never cut).
type partition struct {
	ns string
	// hostRoute and nsRoute are the route link's addresses (root and
	// namespace ends), nsAPI the node's API address.
	hostRoute, nsRoute, nsAPI string
	// nsLink is the namespace end of the route link.
	nsLink string
}

// skipUnlessNetns skips (or, on CI as root, fails) with why the partition
// test cannot run.
func skipUnlessNetns(t *testing.T, why string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(why, args...)
	if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
		t.Fatalf("CI runs as root and must run the partition test: %s", msg)
	}
	t.Skipf("partition test skipped: %s", msg)
}

// newPartition creates the namespace and links, removed at cleanup.
func newPartition(t *testing.T) *partition {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("partition test skipped: it needs root (ip netns add, veth pairs)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skipUnlessNetns(t, "the ip tool (iproute2) is not on PATH")
	}
	var suffix [3]byte
	_, err := rand.Read(suffix[:])
	require.NoError(t, err)
	id := hex.EncodeToString(suffix[:])
	p := &partition{ns: "sentinel-e2e-" + id, nsLink: "sr" + id + "n"}
	if out, err := exec.Command("ip", "netns", "add", p.ns).CombinedOutput(); err != nil {
		skipUnlessNetns(t, "ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", "sr"+id+"h").Run()
		_ = exec.Command("ip", "link", "del", "sa"+id+"h").Run()
		if out, err := exec.Command("ip", "netns", "del", p.ns).CombinedOutput(); err != nil {
			t.Logf("ip netns del %s: %v: %s", p.ns, err, out)
		}
	})
	net := freeSubnet(t)
	p.hostRoute, p.nsRoute, p.nsAPI = net+".1", net+".2", net+".6"
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
	}
	ip("-n", p.ns, "link", "set", "lo", "up")
	for _, l := range []struct{ name, host, inNS string }{{"sr" + id, net + ".1/30", net + ".2/30"}, {"sa" + id, net + ".5/30", net + ".6/30"}} {
		ip("link", "add", l.name+"h", "type", "veth", "peer", "name", l.name+"n", "netns", p.ns)
		ip("addr", "add", l.host, "dev", l.name+"h")
		ip("link", "set", l.name+"h", "up")
		ip("-n", p.ns, "addr", "add", l.inNS, "dev", l.name+"n")
		ip("-n", p.ns, "link", "set", l.name+"n", "up")
	}
	return p
}

// freeSubnet picks 10.a.b (a in 200..249) that no address or route of the
// machine uses.
func freeSubnet(t *testing.T) string {
	t.Helper()
	addrs, err := exec.Command("ip", "-o", "-4", "addr").CombinedOutput()
	require.NoError(t, err, "%s", addrs)
	routes, err := exec.Command("ip", "-4", "route").CombinedOutput()
	require.NoError(t, err, "%s", routes)
	used := string(addrs) + string(routes)
	for range 100 {
		a, _ := rand.Int(rand.Reader, big.NewInt(50))
		b, _ := rand.Int(rand.Reader, big.NewInt(256))
		net := fmt.Sprintf("10.%d.%d", 200+a.Int64(), b.Int64())
		if !strings.Contains(used, net+".") {
			return net
		}
	}
	t.Fatal("no unused 10.x.y subnet found")
	return ""
}

// cut takes the namespace end of the route link down (heal: up).
func (p *partition) set(t *testing.T, state string) {
	t.Helper()
	out, err := exec.Command("ip", "-n", p.ns, "link", "set", p.nsLink, state).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestPartitionedNodeRefusesAndStopsPollingOthersCarryOn puts one of three
// nodes in its own network namespace and cuts its route link: it turns
// /readyz 503, refuses writes and pushes with 503 cluster_unavailable and
// stops polling, while the other two take over its polls and keep
// delivering; healed, it is ready again and every session's inbox holds
// every event exactly once, in order, on every node.
func TestPartitionedNodeRefusesAndStopsPollingOthersCarryOn(t *testing.T) {
	p := newPartition(t)
	t.Parallel()
	const cut = 2
	feed := &fakeFeed{path: filepath.Join(t.TempDir(), "feed.jsonl")}
	c := e2etest.StartCluster(t, binary, e2etest.ClusterOptions{
		Env: []string{"AGENTPROTO_TESTING_FAKE_FEED=" + feed.path, "AGENTPROTO_POLL_ACTIVE_INTERVAL=1s", "AGENTPROTO_POLL_IDLE_INTERVAL=1s",
			"AGENTPROTO_BUS_MEMBER_TTL=2s", "AGENTPROTO_BUS_LEASE_TTL=3s"},
		Host: func(i int) string {
			if i == cut {
				return p.nsAPI
			}
			return "127.0.0.1"
		},
		RouteHost: func(i int) string {
			if i == cut {
				return p.nsRoute
			}
			return p.hostRoute
		},
		Wrap: func(i int) []string {
			if i == cut {
				return []string{"ip", "netns", "exec", p.ns}
			}
			return nil
		},
	})
	a, cutOff := nodeAPI(t, c, 0), nodeAPI(t, c, cut)
	began := time.Now()
	phase := func(what string) { t.Logf("%6.1fs %s", time.Since(began).Seconds(), what) }

	// Twelve sentinels on twelve repositories: the cut node almost
	// surely polls some of them.
	const sentinels = 12
	wl := newFeedWorkload(t, c, feed, "part", sentinels, 3)
	delivered := func(n api) { wl.delivered(n, 90*time.Second) }
	wl.round(1)
	delivered(a)
	phase("round 1 delivered")
	const series = `sentinel_poll_duration_seconds_count{provider="fake"}`
	polls := func() float64 { v, _ := metric(t, cutOff, series); return v }
	p0 := polls()
	if !within(10*time.Second, func() bool { return polls() > p0 }) {
		t.Log("the node to cut polls no sentinel (its partitions hold none of the twelve repositories)")
	}

	// Cut.
	phase("cut")
	p.set(t, "down")
	cutAt := time.Now()
	eventually(t, c, 30*time.Second, func() bool {
		ans, err := call(cutOff.url, "", "GET", "/readyz", nil, nil)
		return err == nil && ans.status == http.StatusServiceUnavailable
	}, "the cut node's /readyz turns 503")
	t.Logf("the cut node reported 503 %s after the cut", time.Since(cutAt).Round(100*time.Millisecond))
	ready := cutOff.do("GET", "/readyz", nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status, ready.raw)
	require.Equal(t, "cluster_unavailable", ready.body["reason"], "the cut node's /readyz names its reason: %s", ready.raw)
	ans := cutOff.do("POST", "/sentinels", map[string]any{"subject": wl.subject(99), "sessionId": wl.session(99), "provider": "fake"})
	require.Equal(t, http.StatusServiceUnavailable, ans.status, ans.raw)
	require.Equal(t, "cluster_unavailable", ans.body["error"], ans.raw)
	ans, err := fakePush(cutOff.url, wl.ids[0], fakeEnvelope(t, "evt_part_refused", wl.subject(0)))
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, ans.status, "a push to the cut node is refused, so the sender moves on: %s", ans.raw)
	// A tick in flight at the cut may still finish: from one tick later,
	// its poll count stands still over three ticks.
	since := time.Now()
	eventually(t, c, 20*time.Second, func() bool { return time.Since(since) > time.Second }, "a tick passes")
	stopped := polls()
	since = time.Now()
	// Meanwhile the others take pushes, take over its polls and deliver.
	// The majority's own streams may be electing a leader the cut node
	// held, and its requests that reach the cut node time out until its
	// routes to it close (tens of seconds): the sender moves between the
	// two on 503s and sends again after a 500 persist_failed.
	majority := &failoverSender{urls: c.URLs()[:cut], redeliverFailed: true}
	push := fakeEnvelope(t, "evt_part_push", wl.subject(0))
	r := majority.send(fakeRoute(wl.ids[0]), fakeHeaders(push), push, 60*time.Second)
	require.Equal(t, http.StatusOK, r.status, "%d attempts: %s", r.attempts, r.last)
	t.Logf("the majority took the push after %d attempts", r.attempts)
	wl.want[0] = append(wl.want[0], "evt_part_push")
	delivered(a)
	phase("the push delivered by the majority")
	wl.round(2)
	delivered(a)
	phase("round 2 delivered by the majority")
	eventually(t, c, 20*time.Second, func() bool { return time.Since(since) > 3*time.Second }, "three ticks pass")
	require.Equal(t, stopped, polls(), "the cut node polls nothing")
	ans = a.do("POST", "/sentinels", map[string]any{"subject": wl.subject(99), "sessionId": wl.session(99), "provider": "fake"})
	require.Equal(t, http.StatusCreated, ans.status, "the majority takes writes: %s", ans.raw)

	// Heal: ready again, polling again, nothing lost.
	phase("heal")
	p.set(t, "up")
	healAt := time.Now()
	eventually(t, c, 60*time.Second, func() bool {
		ans, err := call(cutOff.url, "", "GET", "/readyz", nil, nil)
		return err == nil && ans.status == http.StatusOK
	}, "the healed node is ready again")
	t.Logf("the healed node was ready %s after the heal", time.Since(healAt).Round(100*time.Millisecond))
	wl.round(3)
	for i := range 3 {
		delivered(nodeAPI(t, c, i))
	}
	phase("round 3 delivered, read on every node")
	if polls() > p0 {
		eventually(t, c, 30*time.Second, func() bool { return polls() > stopped }, "the healed node polls its share again")
	}
}

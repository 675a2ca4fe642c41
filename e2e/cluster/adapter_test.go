package cluster_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// adapterCluster is the feed adapter installed on nodes 1 and 2 of a
// cluster (node 3 lacks it), all reading one feed file.
type adapterCluster struct {
	dir, feed string
}

// newAdapterCluster builds the feed adapter and returns the per-node
// environment that installs it on the first two nodes.
func newAdapterCluster(t *testing.T) (*adapterCluster, func(i int) []string) {
	bin := adaptertest.Build(t)
	ac := &adapterCluster{dir: t.TempDir(), feed: filepath.Join(t.TempDir(), "feed.jsonl")}
	adaptertest.Install(t, bin, ac.dir, "feed")
	return ac, func(i int) []string {
		env := []string{"AGENTPROTO_ADAPTERS_NO_PATH=true"}
		if i < 2 {
			env = append(env, "AGENTPROTO_ADAPTERS_PATHS="+ac.dir, "FEED_FEED="+ac.feed)
		}
		return env
	}
}

// clusterMembers reads GET /cluster's members on a.
func clusterMembers(t *testing.T, a api) ([]any, []any) {
	t.Helper()
	ans := a.do("GET", "/cluster", nil)
	require.Equal(t, http.StatusOK, ans.status, ans.raw)
	view, _ := ans.body["cluster"].(map[string]any)
	members, _ := view["members"].([]any)
	leases, _ := view["leases"].([]any)
	return members, leases
}

// adapterOn returns the state of slug on member name, "" when absent.
func adapterOn(members []any, name, slug string) (status, reason string) {
	for _, m := range members {
		mm, _ := m.(map[string]any)
		if mm["name"] != name {
			continue
		}
		ads, _ := mm["adapters"].([]any)
		for _, a := range ads {
			am, _ := a.(map[string]any)
			if am["slug"] == slug {
				s, _ := am["status"].(string)
				r, _ := am["reason"].(string)
				return s, r
			}
		}
	}
	return "", ""
}

// adapterAcrossTheCluster: the feed adapter, on nodes 1 and 2, is listed
// there and not on node 3; it is set up on node 2 (the credential store is
// the cluster's), watched on node 1 for a subject whose poll partition a
// node with the adapter owns, polled by that node's own adapter process,
// and delivered through the pipeline to an inbox read on node 3. GET
// /cluster shows the adapter running on the node that polled it and, on
// node 3, unavailable: not installed.
func adapterAcrossTheCluster(t *testing.T, c *e2etest.Cluster, ac *adapterCluster) {
	n1, n2, n3 := nodeAPI(t, c, 0), nodeAPI(t, c, 1), nodeAPI(t, c, 2)
	require.Contains(t, n1.do("GET", "/adapters", nil).raw, `"slug":"feed"`)
	require.NotContains(t, n3.do("GET", "/adapters", nil).raw, `"slug":"feed"`, "node 3 has no such adapter")

	setup := n2.do("POST", "/adapters/feed/setup", map[string]any{"fields": map[string]string{"token": "cluster-feed-token-1234"}})
	require.Equal(t, http.StatusOK, setup.status, setup.raw)
	eventually(t, c, 20*time.Second, func() bool {
		return strings.Contains(n1.do("GET", "/adapters", nil).raw, `"status":"ready"`)
	}, "node 1 reads the setup node 2 stored")

	// A subject whose poll partition node 1 or node 2 owns. The nodes
	// take their poll leases after they are ready: the listing may hold
	// none of them yet, so it is read until one fits.
	var subject, owner string
	eventually(t, c, 30*time.Second, func() bool {
		subject, owner = "", ""
		_, leases := clusterMembers(t, n1)
		owners := map[string]string{}
		polls := 0
		for _, l := range leases {
			lm, _ := l.(map[string]any)
			item, _ := lm["item"].(string)
			o, _ := lm["owner"].(string)
			owners[item] = o
			if strings.HasPrefix(item, "poll.") {
				polls++
			}
		}
		if polls != cluster.DefaultConfig(0, 0).PollPartitions {
			return false // not every poll lease is taken yet
		}
		for k := range 200 {
			s := fmt.Sprintf("feed:orders-%d", k)
			o := owners[cluster.PollItem(cluster.PollPartition(cluster.PollKey(s), polls))]
			if o == "n1" || o == "n2" {
				subject, owner = s, o
				return true
			}
		}
		return false
	}, "a poll partition owned by a node with the adapter")

	// Types given: a node without the adapter has no default types for
	// its clauses (docs/adapters.md, "In a cluster").
	createSentinel(t, n1, map[string]any{"subject": subject, "types": []string{"feed.*"}, "sessionId": "adapter-s1", "provider": "feed", "until": "never"})
	adaptertest.WriteFeed(t, ac.feed,
		adaptertest.Line{Subject: subject, Type: "feed.order.created", ID: "o1", Summary: "order one"},
		adaptertest.Line{Subject: subject, Type: "feed.order.paid", ID: "o2", Summary: "order one paid"})
	eventually(t, c, 60*time.Second, func() bool {
		ans, err := call(n1.url, n1.token, "POST", "/sentinels/poll", map[string]any{}, nil)
		if err != nil || ans.status != http.StatusOK {
			return false
		}
		msgs, err := tryReadInbox(n3, "adapter-s1")
		return err == nil && len(msgs) >= 2
	}, "the adapter's events delivered, read on node 3")
	msgs := readInbox(t, n3, "adapter-s1")
	require.Len(t, msgs, 2)

	eventually(t, c, 20*time.Second, func() bool {
		members, _ := clusterMembers(t, n3)
		st, _ := adapterOn(members, owner, "feed")
		miss, why := adapterOn(members, "n3", "feed")
		return st == "running" && miss == "unavailable" && why == "not installed on this node"
	}, "GET /cluster: feed running on %s, unavailable on n3", owner)
}

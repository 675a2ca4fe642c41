package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/cmd/cli"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/runtime/app"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// runCLI runs the sentinel command line against one node.
func runCLI(t *testing.T, a *app.App, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_TOKEN", a.Token)
	t.Setenv("AGENTPROTO_URL", a.URL())
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func viewOf(t *testing.T, a *app.App) (api.ClusterView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return apiclient.Cluster{C: apiclient.New(a.URL(), a.Token)}.View(ctx)
}

// scrape reads the gauges of a node's /metrics whose names start with one
// of prefixes (default: the cluster gauges).
func scrape(t *testing.T, a *app.App, prefixes ...string) map[string]float64 {
	if len(prefixes) == 0 {
		prefixes = []string{"sentinel_cluster_"}
	}
	req, err := http.NewRequest(http.MethodGet, a.URL()+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(line, p) }) {
			name, val, _ := strings.Cut(line, " ")
			f, err := strconv.ParseFloat(val, 64)
			require.NoError(t, err, line)
			out[name] = f
		}
	}
	return out
}

func owners(v api.ClusterView) map[string]string {
	out := map[string]string{}
	for _, l := range v.Leases {
		out[l.Item] = l.Owner
	}
	return out
}

func memberNames(v api.ClusterView) []string {
	var out []string
	for _, m := range v.Members {
		out = append(out, m.Name)
	}
	return out
}

func metaPeers(v api.ClusterView) []string {
	var out []string
	for _, p := range v.Meta.Peers {
		out = append(out, p.Name)
	}
	return out
}

// waitFor waits until cond reports nothing left to wait for (""),
// asking every 100 ms (a view costs some thirty JetStream requests), and
// fails with the last reason after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		why := cond()
		if why == "" {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("%s: not within %s: %s", what, within, why)
		case <-tick.C:
		}
	}
}

// settled reports why a view is not yet the steady state of a healthy
// cluster of names ("" once it is): every member live, every item owned
// by one of them, a meta leader and every asset led and current.
func settled(v api.ClusterView, names []string) string {
	if !v.Writable {
		return "not writable: " + v.WritableError
	}
	if !slices.Equal(memberNames(v), names) {
		return fmt.Sprintf("members %v", memberNames(v))
	}
	for _, m := range v.Members {
		if !m.Live {
			return m.Name + " not live"
		}
	}
	for item, owner := range owners(v) {
		if !slices.Contains(names, owner) {
			return fmt.Sprintf("%s owned by %q", item, owner)
		}
	}
	if !v.Meta.Known || v.Meta.Leader == "" || !slices.Equal(metaPeers(v), names) {
		return fmt.Sprintf("meta %+v", v.Meta)
	}
	for _, as := range v.Assets {
		if as.Leader == "" || as.State != api.AssetCurrent {
			return fmt.Sprintf("asset %s: %s (%s)", as.Name, as.State, as.Error)
		}
	}
	if len(v.Errors) > 0 {
		return fmt.Sprint(v.Errors)
	}
	return ""
}

// Three nodes: each answers GET /cluster with the same members, lease
// owners and meta leader; what the leases bucket says matches what each
// node holds; the CLI renders it; /metrics counts it.
func TestClusterViewOverHTTPAndCLI(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	apps := startCluster(t, cfgs)
	names := []string{"n1", "n2", "n3"}
	views := make([]api.ClusterView, len(apps))
	waitFor(t, 60*time.Second, "a settled, consistent view on every node", func() string {
		for i, a := range apps {
			v, err := viewOf(t, a)
			if err != nil {
				return err.Error()
			}
			if why := settled(v, names); why != "" {
				return a.Cfg.Node.Name + ": " + why
			}
			views[i] = v
		}
		for _, v := range views[1:] {
			if !maps.Equal(owners(views[0]), owners(v)) || views[0].Meta.Leader != v.Meta.Leader {
				return "views differ"
			}
		}
		// What the bucket says each node owns is what it holds.
		for _, a := range apps {
			var fromView []string
			for item, owner := range owners(views[0]) {
				if owner == a.Cfg.Node.Name {
					fromView = append(fromView, item)
				}
			}
			slices.Sort(fromView)
			if !slices.Equal(fromView, a.Cluster.Held()) {
				return fmt.Sprintf("%s holds %v, the bucket says %v", a.Cfg.Node.Name, a.Cluster.Held(), fromView)
			}
		}
		return ""
	})

	for i, v := range views {
		a := apps[i]
		require.Equal(t, a.Cfg.Node.Name, v.Node)
		require.Equal(t, api.ModeClustered, v.Mode)
		require.True(t, v.Writable)
		require.Len(t, v.Leases, 32+len(cluster.Jobs))
		for j, m := range v.Members {
			require.Equal(t, apps[j].URL(), m.APIURL, "a member's API URL")
			require.Equal(t, i == j, m.Self)
			require.False(t, m.StartedAt.IsZero())
		}
		require.True(t, v.RoutesKnown)
		var peers []string
		for _, r := range v.Routes {
			peers = append(peers, r.Name)
			require.Positive(t, r.Connections)
		}
		require.Equal(t, slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == a.Cfg.Node.Name }), peers, "routes to the two others")
		require.Len(t, v.Assets, 7+17)
		for _, as := range v.Assets {
			require.Equal(t, 3, as.Replicas, as.Name)
			require.Len(t, as.Peers, 3, as.Name)
		}
		require.Len(t, v.Delivery.Partitions, cfgs[i].Bus.Partitions)
		for p, dp := range v.Delivery.Partitions {
			require.Equal(t, fmt.Sprintf("deliver-%d", p), dp.Consumer)
			require.Contains(t, names, dp.Leader)
			require.Empty(t, dp.Error)
		}
		require.Contains(t, v.Delivery.Note, "every live node pulls")
	}

	code, out, errOut := runCLI(t, apps[1], "cluster")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"n2 (clustered)", "MEMBERS", "n2 (this node)", "n1", "n3", "leader: " + views[1].Meta.Leader,
		"sentinel_records", "deliver-0", "every live node pulls"} {
		require.Contains(t, out, want)
	}
	code, out, errOut = runCLI(t, apps[2], "cluster", "--json")
	require.Equal(t, 0, code, errOut)
	var js struct {
		OK      bool            `json:"ok"`
		Cluster api.ClusterView `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &js), out)
	require.True(t, js.OK)
	require.Equal(t, "n3", js.Cluster.Node)
	require.Equal(t, names, memberNames(js.Cluster))

	waitFor(t, 30*time.Second, "the gauges count 3 members with quorum, every partition and job owned once", func() string {
		polls, jobs := 0.0, 0.0
		for _, a := range apps {
			g := scrape(t, a)
			if g["sentinel_cluster_members"] != 3 || g["sentinel_cluster_quorum"] != 1 {
				return fmt.Sprint(a.Cfg.Node.Name, g)
			}
			polls += g["sentinel_cluster_owned_poll_partitions"]
			jobs += g["sentinel_cluster_owned_jobs"]
		}
		if polls != 32 || jobs != float64(len(cluster.Jobs)) {
			return fmt.Sprint("owned polls ", polls, ", jobs ", jobs)
		}
		return ""
	})
}

// A lost node is removed: a live one is refused (and the answering node
// always), a crashed one leaves the JetStream peers and the members, and
// its work moves to the survivors.
func TestClusterRemoveLostNode(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	for i := range cfgs {
		// A crashed node's heartbeat outlives it long enough to be seen.
		cfgs[i].Bus.MemberTTL = 45 * time.Second
	}
	apps := startCluster(t, cfgs)
	n1 := &node{t: t, app: apps[0]}
	waitFor(t, 60*time.Second, "a settled cluster", func() string {
		v, err := viewOf(t, apps[0])
		if err != nil {
			return err.Error()
		}
		return settled(v, []string{"n1", "n2", "n3"})
	})

	code, _, errOut := runCLI(t, apps[0], "cluster", "remove", "n2")
	require.Equal(t, api.ExitInvalid, code, errOut)
	require.Contains(t, errOut, "node_live")
	require.Contains(t, errOut, "--force")
	resp, raw := n1.req("POST", "/cluster/remove", map[string]any{"node": "n1", "force": true})
	require.Equal(t, 409, resp.StatusCode, string(raw))
	require.Contains(t, string(raw), `"node_live"`)
	code, _, errOut = runCLI(t, apps[0], "cluster", "remove", "n9")
	require.Equal(t, api.ExitNotFound, code, errOut)
	require.Contains(t, errOut, "node_not_found")

	// Lose n3 the way a crash does: it stops, its heartbeat stays behind
	// (a clean stop deletes its own) with its last beat.
	require.NoError(t, apps[2].Stop(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	last, _ := json.Marshal(cluster.Member{Name: "n3", APIURL: apps[2].URL(), StartedAt: time.Now().Add(-time.Hour), BeatAt: time.Now().Add(-time.Minute)})
	_, err := bucketOf(t, apps[0], cluster.BucketNodes).Put(ctx, "node.n3", last)
	require.NoError(t, err)
	// What a lost node shows in the meta group is CURRENT no
	// (docs/cluster.md, "Removing a lost node", #31 item 11).
	waitFor(t, 60*time.Second, "n3 not current in the meta group", func() string {
		v, err := viewOf(t, apps[0])
		if err != nil {
			return err.Error()
		}
		for _, p := range v.Meta.Peers {
			if p.Name == "n3" && !p.Current {
				return ""
			}
		}
		return fmt.Sprintf("meta peers: %+v", v.Meta.Peers)
	})

	var out string
	waitFor(t, 60*time.Second, "n3 removed", func() string {
		// The meta leader may be re-elected after n3 left: a refusal
		// then is peer_remove_failed (exit 1), asked again.
		code, out, errOut = runCLI(t, apps[0], "cluster", "remove", "n3")
		require.Contains(t, []int{0, api.ExitError}, code, errOut)
		if code != 0 {
			return errOut
		}
		return ""
	})
	require.Contains(t, out, "Removed n3")

	for _, a := range apps[:2] {
		waitFor(t, 60*time.Second, a.Cfg.Node.Name+": n3 gone from the members and the peers, its work taken over", func() string {
			v, err := viewOf(t, a)
			if err != nil {
				return err.Error()
			}
			return settled(v, []string{"n1", "n2"})
		})
	}
	waitFor(t, 60*time.Second, "a second removal answered", func() string {
		// A loaded machine can leave a node briefly unable to write: that
		// answer (503, nothing done) is asked again.
		code, _, errOut = runCLI(t, apps[1], "cluster", "remove", "n3")
		if strings.Contains(errOut, "cluster_unavailable") {
			return errOut
		}
		return ""
	})
	require.Equal(t, api.ExitNotFound, code, "a second removal finds nothing: %s", errOut)
}

// A single node answers too: one member that owns everything, JetStream
// on its own server; there is nothing to remove.
func TestClusterViewSingleNode(t *testing.T) {
	n := startNode(t)
	a := n.app
	v, err := viewOf(t, a)
	require.NoError(t, err)
	require.Equal(t, api.ModeSingle, v.Mode)
	require.True(t, v.Writable)
	require.Equal(t, []string{a.Cfg.Node.Name}, memberNames(v))
	require.True(t, v.Members[0].Self && v.Members[0].Live)
	require.Equal(t, a.URL(), v.Members[0].APIURL)
	require.Len(t, v.Leases, 32+len(cluster.Jobs))
	for _, l := range v.Leases {
		require.Equal(t, a.Cfg.Node.Name, l.Owner, l.Item)
	}
	require.True(t, v.RoutesKnown)
	require.Empty(t, v.Routes)
	require.True(t, v.Meta.Known)
	require.Equal(t, a.Cfg.Node.Name, v.Meta.Leader)
	// Every stream and bucket the store holds is in the view (#31 item
	// 10: docs/cli.md and docs/api.md say so; the journal, hooks and MCP
	// Events assets and the principals bucket were left out).
	var held, shown []string
	names := jetStreamOf(t, a).StreamNames(context.Background())
	for n := range names.Name() {
		held = append(held, n)
	}
	require.NoError(t, names.Err())
	for _, as := range v.Assets {
		if as.Kind == "bucket" {
			shown = append(shown, "KV_"+as.Name)
		} else {
			shown = append(shown, as.Name)
		}
	}
	require.ElementsMatch(t, held, shown, "the view shows every stream and bucket the store holds")
	require.Len(t, v.Assets, 7+17)
	for _, as := range v.Assets {
		require.Equal(t, api.AssetCurrent, as.State, "%s: %s", as.Name, as.Error)
		require.Equal(t, a.Cfg.Node.Name, as.Leader, as.Name)
		require.Equal(t, 1, as.Replicas)
	}
	require.Len(t, v.Delivery.Partitions, a.Cfg.Bus.Partitions)
	require.Empty(t, v.Errors)

	g := scrape(t, a)
	require.Equal(t, map[string]float64{"sentinel_cluster_members": 1, "sentinel_cluster_quorum": 1,
		"sentinel_cluster_owned_poll_partitions": 32, "sentinel_cluster_owned_jobs": float64(len(cluster.Jobs))}, g)

	code, out, errOut := runCLI(t, a, "cluster")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "(single)")
	require.Contains(t, out, "32 (0,1,2")
	code, _, errOut = runCLI(t, a, "cluster", "remove", "other")
	require.Equal(t, api.ExitInvalid, code)
	require.Contains(t, errOut, "not_clustered")
	_, err = apiclient.Cluster{C: apiclient.New(a.URL(), a.Token)}.Remove(context.Background(), api.ClusterRemove{Node: "other"})
	var de *sentinel.Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, api.CodeNotClustered, de.Code)
}

// On an external NATS deployment the node reports what a client account
// sees: its members and leases, the assets' leaders, and the meta group
// and routes as unknown; a removal deletes the member and names what is
// left to the NATS operator.
func TestClusterViewExternalMode(t *testing.T) {
	ecfg := embedded.DefaultConfig()
	ecfg.StoreDir, ecfg.SyncAlways, ecfg.ServerName = t.TempDir(), false, "ext1"
	ecfg.Listen, ecfg.ListenToken = "127.0.0.1:-1", "external-nats-token"
	srv, err := embedded.Start(ecfg, nil)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)

	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Testing.FakeProvider = true
	cfg.Node.Name = "x1"
	cfg.NATS.URL = []string{srv.ClientURL()}
	cfg.NATS.ClientToken = "external-nats-token"
	a, err := app.New(cfg, testLogger(t, "x1"))
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	t.Cleanup(func() { _ = a.Stop(context.Background()) })

	var v api.ClusterView
	waitFor(t, 30*time.Second, "the node owns every item", func() string {
		if v, err = viewOf(t, a); err != nil {
			return err.Error()
		}
		return settledExternal(v)
	})
	require.Equal(t, api.ModeExternal, v.Mode)
	require.Equal(t, []string{"x1"}, memberNames(v))
	require.False(t, v.RoutesKnown)
	require.False(t, v.Meta.Known)
	require.Contains(t, v.Meta.Note, "system account")
	for _, as := range v.Assets {
		require.Equal(t, "ext1", as.Leader, as.Name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	last, _ := json.Marshal(cluster.Member{Name: "x2", BeatAt: time.Now().Add(-time.Minute)})
	_, err = bucketOf(t, a, cluster.BucketNodes).Put(ctx, "node.x2", last)
	require.NoError(t, err)
	code, out, errOut := runCLI(t, a, "cluster", "remove", "x2", "--json")
	require.Equal(t, 0, code, errOut)
	var res struct {
		Removed api.ClusterRemoved `json:"removed"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.False(t, res.Removed.PeerRemoved)
	require.True(t, res.Removed.MemberRemoved)
	require.Contains(t, res.Removed.Note, "peer-remove")
	code, _, _ = runCLI(t, a, "cluster", "remove", "ghost")
	require.Equal(t, api.ExitNotFound, code)
}

func settledExternal(v api.ClusterView) string {
	for _, l := range v.Leases {
		if l.Owner != "x1" {
			return l.Item + " owned by " + l.Owner
		}
	}
	if len(v.Members) != 1 || !v.Members[0].Live {
		return fmt.Sprint("members ", v.Members)
	}
	return ""
}

package sentinels_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/githubapp"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// TestThreeNodesShareOneApp runs three clustered nodes, each with its own
// github-app provider over its node's replica of the shared bucket, all
// set up with one App: a watch on one node, an installation change
// delivered to another and a push to the third reach the same state, and
// the App's webhook is reconciled once for the cluster.
func TestThreeNodesShareOneApp(t *testing.T) {
	key := appTestKey(t)
	gh := githubtest.New(t, githubtest.Options{})
	gh.SetApp(77, "sentinel", &key.PublicKey)
	gh.Install("Codertocat", appRepo)
	setup := mapCreds{githubapp.FieldAppID: "77", githubapp.FieldPrivateKeyFile: writeAppKey(t, key), githubapp.FieldWebhookSecret: appSecret}
	nodes := runtimetest.StartCluster(t, 3, runtimetest.Options{NoWorkers: true, ExtraFor: func(be *bustest.Env) []providers.Provider {
		p, err := githubapp.New(githubapp.Config{Creds: setup, Store: bus.NewKV(be.KeyValue(t, sentinels.HooksBucket())), HTTP: gh.HTTPClient(), Now: gh.Now})
		require.NoError(t, err)
		return []providers.Provider{p}
	}})
	ctx := context.Background()

	rec, err := nodes[0].Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", Subject: "github:" + appRepo + "#2", Provider: githubapp.Slug}, "")
	require.NoError(t, err)

	// An installation change through node 2 covers acme/new for node 3.
	change := []byte(`{"action":"added","installation":{"id":5},"repositories_added":[{"full_name":"acme/new"}],"repositories_removed":[]}`)
	_, err = nodes[1].Service.Inbound(ctx, appDelivery("installation_repositories", change))
	require.NoError(t, err)
	other, err := nodes[2].Service.Create(ctx, sentinel.WatchRequest{SessionID: "s2", Subject: "github:acme/new#1", Provider: githubapp.Slug}, "")
	require.NoError(t, err)
	require.Equal(t, "5", other.Handle.RemoteID)

	// A push to node 3 delivers to the sentinel node 1 created, only.
	body, err := os.ReadFile(filepath.Join("testdata", "githubapp_pull_request.json"))
	require.NoError(t, err)
	res, err := nodes[2].Service.Inbound(ctx, appDelivery("pull_request", body))
	require.NoError(t, err)
	require.Equal(t, 1, res.Sentinels)
	require.Positive(t, res.Delivered)
	bustest.Eventually(t, 5*time.Second, func() bool {
		got, err := nodes[1].Service.Get(ctx, rec.ID)
		return err == nil && got.Provider == githubapp.Slug
	}, "node 2 sees the sentinel node 1 created")

	// Reconciliation asked of every node runs one pass for the App.
	failed := gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-lost", Event: "pull_request", StatusCode: http.StatusBadGateway})
	for _, n := range nodes {
		p, ok := n.Registry.Get(githubapp.Slug)
		require.True(t, ok)
		_, err := p.(providers.Reconciler).Reconcile(ctx, rec.Handle)
		require.NoError(t, err)
	}
	require.Equal(t, []int64{failed}, gh.AppRedeliveries(), "one redelivery for the cluster")
	require.Equal(t, 1, gh.Count(http.MethodGet, "/app/hook/deliveries"), "one pass for the cluster")
	require.LessOrEqual(t, gh.TokensIssued(), 3, "at most one installation token per node")
	gh.Verify(t)
}

package httpapi_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

type fakeCluster struct{ got api.ClusterRemove }

func (f *fakeCluster) View(context.Context) (api.ClusterView, error) {
	return api.ClusterView{Node: "n1", Mode: api.ModeClustered, Writable: true,
		Members: []api.ClusterMember{{Name: "n1", Live: true, Self: true}}}, nil
}

func (f *fakeCluster) Remove(_ context.Context, req api.ClusterRemove) (api.ClusterRemoved, error) {
	f.got = req
	switch req.Node {
	case "n2":
		if !req.Force {
			return api.ClusterRemoved{}, sentinel.Errorf(api.CodeNodeLive, "node n2 is live")
		}
	case "n3":
	default:
		return api.ClusterRemoved{}, sentinel.Errorf(api.CodeNodeNotFound, "no node %s", req.Node)
	}
	return api.ClusterRemoved{Node: req.Node, PeerRemoved: true, MemberRemoved: true}, nil
}

func TestClusterHandlers(t *testing.T) {
	fc := &fakeCluster{}
	r := chi.NewRouter()
	httpapi.ClusterRoutes(r, fc)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	cases := []struct {
		name, method, path, body string
		status                   int
		check                    func(t *testing.T, out map[string]any)
	}{
		{"view", "GET", "/cluster", ``, 200, func(t *testing.T, out map[string]any) {
			c := out["cluster"].(map[string]any)
			require.Equal(t, "n1", c["node"])
			require.Equal(t, "clustered", c["mode"])
			require.Equal(t, true, c["writable"])
		}},
		{"remove", "POST", "/cluster/remove", `{"node":"n3"}`, 200, func(t *testing.T, out map[string]any) {
			require.Equal(t, map[string]any{"node": "n3", "peerRemoved": true, "memberRemoved": true, "leasesReleased": float64(0)}, out["removed"])
		}},
		{"a live node is refused", "POST", "/cluster/remove", `{"node":"n2"}`, 409, func(t *testing.T, out map[string]any) {
			require.Equal(t, "node_live", out["error"])
		}},
		{"force passes through", "POST", "/cluster/remove", `{"node":"n2","force":true}`, 200, func(t *testing.T, _ map[string]any) {
			require.True(t, fc.got.Force)
		}},
		{"unknown node", "POST", "/cluster/remove", `{"node":"n9"}`, 404, func(t *testing.T, out map[string]any) {
			require.Equal(t, "node_not_found", out["error"])
		}},
		{"no node", "POST", "/cluster/remove", `{}`, 400, func(t *testing.T, out map[string]any) {
			require.Equal(t, "invalid_input", out["error"])
		}},
		{"unknown field", "POST", "/cluster/remove", `{"node":"n3","now":true}`, 400, func(t *testing.T, out map[string]any) {
			require.Equal(t, "unknown_field", out["error"])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := do(t, tc.method, srv.URL+tc.path, tc.body)
			require.Equal(t, tc.status, status, "%v", out)
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

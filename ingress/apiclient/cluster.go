package apiclient

import (
	"context"
	"net/http"

	"github.com/agentproto/sentinel/ingress/api"
)

// Cluster implements api.Cluster over the node's REST API (GET /cluster,
// POST /cluster/remove). Errors are *sentinel.Error values carrying the
// node's catalogue code (see AsDomain).
type Cluster struct {
	C *Client
}

var _ api.Cluster = Cluster{}

// View reads the answering node's view of the cluster.
func (c Cluster) View(ctx context.Context) (api.ClusterView, error) {
	var out struct {
		Cluster api.ClusterView `json:"cluster"`
	}
	err := c.C.Do(ctx, http.MethodGet, "/cluster", nil, &out)
	return out.Cluster, AsDomain(err)
}

// Remove permanently removes a lost node. It is a POST: an answer lost on
// the way is not repeated on another node (ErrOutcomeUnknown); asking
// again answers node_not_found once the removal was done.
func (c Cluster) Remove(ctx context.Context, req api.ClusterRemove) (api.ClusterRemoved, error) {
	var out struct {
		Removed api.ClusterRemoved `json:"removed"`
	}
	err := c.C.Do(ctx, http.MethodPost, "/cluster/remove", req, &out)
	return out.Removed, AsDomain(err)
}

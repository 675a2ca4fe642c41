package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// clusterView is the part of GET /cluster the run reads: every stream's
// and bucket's Raft state.
type clusterView struct {
	Cluster struct {
		Assets []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"assets"`
	} `json:"cluster"`
}

// waitHealthy waits, bounded by ctx, until the target says every node is
// ready and a node's cluster view shows every stream and bucket current
// (a leader, every replica caught up): a node that was just restarted has
// caught up, so the next fault cannot leave a replica group without a
// current majority.
func waitHealthy(ctx context.Context, t Target, c *client) error {
	if err := t.WaitHealthy(ctx); err != nil {
		return err
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for i := 0; ; i++ {
		urls := t.URLs()
		var v clusterView
		last = c.api(ctx, urls, i%len(urls), http.MethodGet, "/cluster", nil, &v)
		if last == nil {
			var behind []string
			for _, a := range v.Cluster.Assets {
				if a.State != "current" {
					behind = append(behind, a.Name+" "+a.State)
				}
			}
			if len(behind) == 0 && len(v.Cluster.Assets) > 0 {
				return nil
			}
			last = fmt.Errorf("not every stream and bucket is current: %s", strings.Join(behind, ", "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

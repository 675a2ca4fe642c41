package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// removeTimeout bounds a removal: the JetStream meta leader answers once
// the removal is applied.
const removeTimeout = 30 * time.Second

// externalPeerNote is what is left to do on an external deployment.
const externalPeerNote = "on an external NATS deployment the JetStream peer is the NATS operator's: " +
	"remove the lost server with `nats server cluster peer-remove <server>` (system account)"

// Remove implements api.Cluster: it refuses a live node (unless forced)
// and the answering node, removes the node's server from the JetStream
// meta group (embedded mode, through the embedded server's system
// account), then deletes its heartbeat and releases the leases it held.
func (c clusterAPI) Remove(ctx context.Context, req api.ClusterRemove) (api.ClusterRemoved, error) {
	a := c.a
	name := req.Node
	if name == "" || len(name) > 128 || strings.ContainsAny(name, " \t\r\n.*>") {
		return api.ClusterRemoved{}, sentinel.Errorf(sentinel.CodeInvalidInput, "node %q is not a node name (one token: no spaces, dots or wildcards)", name)
	}
	if a.Cluster == nil {
		return api.ClusterRemoved{}, sentinel.Errorf(api.CodeNotClustered, "this node runs alone (no cluster.listen, no nats.url): there is no other node to remove")
	}
	if name == a.Cfg.Node.Name {
		return api.ClusterRemoved{}, sentinel.Errorf(api.CodeNodeLive, "%s is the node answering this request: stop it and ask another node to remove it", name)
	}
	ctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	members, err := cluster.ReadMembers(ctx, a.clusterKV.Nodes)
	if err != nil {
		return api.ClusterRemoved{}, sentinel.Wrap(sentinel.CodeClusterUnavailable, err, fmt.Sprintf("cannot read the cluster's members: %v", err))
	}
	var member *cluster.Member
	for i := range members {
		if members[i].Name == name {
			member = &members[i]
		}
	}
	if member != nil && !req.Force && cluster.Live(*member, a.now(), a.Bus.Cfg.MemberTTL) {
		age := a.now().Sub(member.BeatAt).Round(time.Millisecond)
		return api.ClusterRemoved{}, sentinel.Errorf(api.CodeNodeLive,
			"node %s is live: its last heartbeat is %s old (a node counts as lost %s after its last beat, bus.member_ttl); "+
				"stop it first, or force the removal of a node known to be gone", name, age, a.Bus.Cfg.MemberTTL)
	}
	out := api.ClusterRemoved{Node: name}
	peer := false
	switch {
	case a.nats != nil && a.nats.Clustered():
		err := a.nats.RemovePeer(ctx, name)
		switch {
		case err == nil:
			peer, out.PeerRemoved = true, true
		case errors.Is(err, embedded.ErrPeerNotFound):
		default:
			return out, sentinel.Wrap(api.CodePeerRemoveFailed, err, fmt.Sprintf("removing %s from JetStream failed: %v", name, err))
		}
	case a.Cfg.NATS.External():
		out.Note = externalPeerNote
	}
	if member == nil && !peer {
		return api.ClusterRemoved{}, sentinel.Errorf(api.CodeNodeNotFound, "no node %s: it is neither a member nor a JetStream peer (see sentinel cluster)", name)
	}
	if out.MemberRemoved, err = cluster.RemoveMember(ctx, a.clusterKV.Nodes, name); err != nil {
		return out, sentinel.Wrap(sentinel.CodeInternal, err, fmt.Sprintf("removing the heartbeat of %s failed: %v", name, err))
	}
	if out.LeasesReleased, err = cluster.ReleaseLeasesOf(ctx, a.clusterKV.Leases, name); err != nil {
		return out, sentinel.Wrap(sentinel.CodeInternal, err, fmt.Sprintf("releasing the leases of %s failed: %v", name, err))
	}
	a.Cluster.Kick()
	a.Log.Info("removed a node from the cluster", "node", name, "peer_removed", out.PeerRemoved,
		"member_removed", out.MemberRemoved, "leases_released", out.LeasesReleased, "forced", req.Force)
	return out, nil
}

package app

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// This file gathers the operator's view of the cluster (GET /cluster):
// the members and leases from the KV buckets (runtime/cluster), the route
// and meta state from the embedded server (bus/embedded), and the assets'
// and partition consumers' Raft state from the JetStream API, which works
// in every mode.

// viewTimeout bounds the whole view: a node cut off from its cluster
// answers with what it could read.
const viewTimeout = 8 * time.Second

// deliveryNote says how delivery spreads over the nodes.
const deliveryNote = "every live node pulls from the same durable consumer of each partition (deliver-<p>); " +
	"one event is in flight per partition, on whichever node pulled it"

// clusterAPI implements api.Cluster for the node.
type clusterAPI struct{ a *App }

var _ api.Cluster = clusterAPI{}

// mode is single, clustered or external.
func (a *App) mode() string {
	switch {
	case a.Cfg.NATS.External():
		return api.ModeExternal
	case a.Cfg.Cluster.Clustered():
		return api.ModeClustered
	}
	return api.ModeSingle
}

// pollPartitions is the number of poll leases.
func (a *App) pollPartitions() int {
	if a.Cluster != nil {
		return a.Cluster.Config().PollPartitions
	}
	return cluster.DefaultConfig(a.Bus.Cfg.MemberTTL, a.Bus.Cfg.LeaseTTL).PollPartitions
}

// View implements api.Cluster.
func (c clusterAPI) View(ctx context.Context) (api.ClusterView, error) {
	a := c.a
	ctx, cancel := context.WithTimeout(ctx, viewTimeout)
	defer cancel()
	v := api.ClusterView{Node: a.Cfg.Node.Name, Mode: a.mode(), Writable: true,
		Routes: []api.ClusterRoute{}, Meta: api.ClusterMeta{Peers: []api.ClusterPeer{}}}
	if err := a.Writable(); err != nil {
		v.Writable, v.WritableError = false, err.Error()
	}
	var mu sync.Mutex
	fail := func(part string, err error) {
		mu.Lock()
		v.Errors = append(v.Errors, part+": "+err.Error())
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); v.Members, v.Leases = a.viewMembersAndLeases(ctx, fail) }()
	go func() { defer wg.Done(); v.Assets = a.viewAssets(ctx) }()
	go func() { defer wg.Done(); v.Delivery = a.viewDelivery(ctx) }()
	v.Routes, v.RoutesKnown = a.viewRoutes(fail)
	v.Meta = a.viewMeta()
	wg.Wait()
	return v, nil
}

// viewMembersAndLeases reads the nodes and leases buckets; a single node
// is its only member and owns every item.
func (a *App) viewMembersAndLeases(ctx context.Context, fail func(string, error)) ([]api.ClusterMember, []api.ClusterLease) {
	items := cluster.ItemsOf(a.pollPartitions())
	leases := make([]api.ClusterLease, 0, len(items))
	if a.Cluster == nil {
		now := a.now().UTC()
		self := api.ClusterMember{Name: a.Cfg.Node.Name, APIURL: a.URL(), ClientURL: a.NATSClientURL(),
			StartedAt: a.startedAt, BeatAt: now, Live: true, Self: true, Adapters: clusterAdapters(a.adapterStates())}
		for _, item := range items {
			leases = append(leases, api.ClusterLease{Item: item, Owner: a.Cfg.Node.Name, Since: a.startedAt})
		}
		return []api.ClusterMember{self}, leases
	}
	members := []api.ClusterMember{}
	ms, err := cluster.ReadMembers(ctx, a.clusterKV.Nodes)
	if err != nil {
		fail("members", err)
	}
	now := a.now()
	for _, m := range ms {
		members = append(members, api.ClusterMember{Name: m.Name, APIURL: m.APIURL, ClientURL: m.ClientURL,
			StartedAt: m.StartedAt, BeatAt: m.BeatAt, Live: cluster.Live(m, now, a.Bus.Cfg.MemberTTL), Self: m.Name == a.Cfg.Node.Name,
			Adapters: clusterAdapters(m.Adapters)})
	}
	markMissingAdapters(members)
	held, err := cluster.ReadLeases(ctx, a.clusterKV.Leases)
	if err != nil {
		fail("leases", err)
	}
	for _, item := range items {
		l := held[item]
		leases = append(leases, api.ClusterLease{Item: item, Owner: l.Owner, Since: l.Since})
	}
	return members, leases
}

// viewRoutes reports the embedded server's routes (none alone; unknown
// on an external deployment).
func (a *App) viewRoutes(fail func(string, error)) ([]api.ClusterRoute, bool) {
	out := []api.ClusterRoute{}
	if a.nats == nil {
		return out, false
	}
	rs, err := a.nats.Routes()
	if err != nil {
		fail("routes", err)
		return out, false
	}
	for _, r := range rs {
		out = append(out, api.ClusterRoute{Name: r.Name, Address: r.Address, Connections: r.Connections,
			Solicited: r.Solicited, RTT: r.RTT, Since: r.Since})
	}
	return out, true
}

// viewMeta reports the JetStream meta group: the embedded server's, a
// single server as its own authority, unknown on an external deployment.
func (a *App) viewMeta() api.ClusterMeta {
	m := api.ClusterMeta{Peers: []api.ClusterPeer{}}
	switch {
	case a.nats == nil:
		m.Note = "the JetStream meta group is visible to the NATS system account only (nats server report jetstream)"
	case !a.nats.Clustered():
		name := a.nats.Name()
		m.Known, m.Leader, m.Size, m.QuorumNeeded = true, name, 1, 1
		m.Peers = append(m.Peers, api.ClusterPeer{Name: name, Leader: true, Self: true, Current: true})
		m.Note = "a single server: it holds JetStream's state alone"
	default:
		st, ok := a.nats.Meta()
		if !ok {
			m.Note = "the JetStream meta group has not formed yet"
			return m
		}
		m.Known, m.Cluster, m.Leader, m.Size, m.QuorumNeeded = true, st.Cluster, st.Leader, st.Size, st.QuorumNeeded
		for _, p := range st.Peers {
			m.Peers = append(m.Peers, metaPeer(p))
		}
	}
	return m
}

func metaPeer(p embedded.MetaPeer) api.ClusterPeer {
	return api.ClusterPeer{Name: p.Name, Leader: p.Leader, Self: p.Self, Current: p.Current, Offline: p.Offline,
		ActiveMs: p.Active.Milliseconds(), Lag: p.Lag}
}

// viewAssets reads every stream's and bucket's Raft state, concurrently.
func (a *App) viewAssets(ctx context.Context) []api.ClusterAsset {
	// Every stream and bucket the node provisions (provision.go;
	// clusterview_test.go checks the view against what the store holds).
	viewStreams, viewBuckets := assetNames(a.assetList)
	out := make([]api.ClusterAsset, len(viewStreams)+len(viewBuckets))
	var wg sync.WaitGroup
	for i := range out {
		name, stream, kind := "", "", "stream"
		if i < len(viewStreams) {
			name, stream = viewStreams[i], viewStreams[i]
		} else {
			name, kind = viewBuckets[i-len(viewStreams)], "bucket"
			stream = "KV_" + name
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = a.viewAsset(ctx, name, stream, kind)
		}()
	}
	wg.Wait()
	return out
}

func (a *App) viewAsset(ctx context.Context, name, stream, kind string) api.ClusterAsset {
	as := api.ClusterAsset{Name: name, Kind: kind, State: api.AssetUnknown, Peers: []api.ClusterPeer{}}
	s, err := a.Bus.Stream(ctx, stream)
	if err != nil {
		as.Error = err.Error()
		return as
	}
	info := s.CachedInfo()
	as.Replicas = info.Config.Replicas
	as.Leader, as.State, as.Peers = raftState(info.Cluster, a.nats)
	return as
}

// raftState turns a JetStream ClusterInfo into a leader, a state and the
// peers (the leader first). A single server's info names it as leader
// with no replicas.
func raftState(ci *jetstream.ClusterInfo, srv *embedded.Server) (string, string, []api.ClusterPeer) {
	peers := []api.ClusterPeer{}
	if ci == nil {
		if srv != nil && !srv.Clustered() {
			return srv.Name(), api.AssetCurrent, append(peers, api.ClusterPeer{Name: srv.Name(), Leader: true, Current: true})
		}
		return "", api.AssetUnknown, peers
	}
	if ci.Leader == "" {
		for _, r := range ci.Replicas {
			peers = append(peers, replicaPeer(r))
		}
		return "", api.AssetNoLeader, peers
	}
	state := api.AssetCurrent
	peers = append(peers, api.ClusterPeer{Name: ci.Leader, Leader: true, Current: true})
	for _, r := range ci.Replicas {
		if r == nil {
			continue
		}
		if !r.Current || r.Offline {
			state = api.AssetLagging
		}
		peers = append(peers, replicaPeer(r))
	}
	return ci.Leader, state, peers
}

func replicaPeer(r *jetstream.PeerInfo) api.ClusterPeer {
	if r == nil {
		return api.ClusterPeer{}
	}
	return api.ClusterPeer{Name: r.Name, Current: r.Current, Offline: r.Offline, ActiveMs: r.Active.Milliseconds(), Lag: r.Lag}
}

// viewDelivery reads every partition consumer, concurrently.
func (a *App) viewDelivery(ctx context.Context) api.ClusterDelivery {
	parts := make([]api.ClusterPartition, a.Bus.Cfg.Partitions)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp := api.ClusterPartition{Partition: p, Consumer: bus.ConsumerName(p)}
			c, err := a.Bus.PartitionConsumer(ctx, p)
			if err != nil {
				cp.Error = err.Error()
			} else {
				info := c.CachedInfo()
				cp.Pending, cp.AckPending, cp.Waiting = info.NumPending, info.NumAckPending, info.NumWaiting
				if info.Cluster != nil {
					cp.Leader = info.Cluster.Leader
				}
			}
			parts[p] = cp
		}()
	}
	wg.Wait()
	return api.ClusterDelivery{Note: deliveryNote, Partitions: parts}
}

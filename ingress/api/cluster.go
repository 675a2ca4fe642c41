package api

import (
	"context"
	"time"
)

// Node modes of a ClusterView.
const (
	// ModeSingle is a node alone on its embedded server.
	ModeSingle = "single"
	// ModeClustered is a node whose embedded server routes to others.
	ModeClustered = "clustered"
	// ModeExternal is a node on an existing NATS deployment (nats.url).
	ModeExternal = "external"
)

// Asset states of a ClusterAsset.
const (
	// AssetCurrent: a leader, and every replica caught up.
	AssetCurrent = "current"
	// AssetLagging: a leader, and a replica behind or offline.
	AssetLagging = "lagging"
	// AssetNoLeader: no leader (writes to it fail until one is elected).
	AssetNoLeader = "no_leader"
	// AssetUnknown: its info could not be read (see Error).
	AssetUnknown = "unknown"
)

// ClusterView is the answer of GET /cluster (under "cluster") and what
// `sentinel cluster --json` prints: this node's view of the service's
// nodes, of JetStream's state and of who owns which work.
type ClusterView struct {
	// Node is the name of the node that answered.
	Node string `json:"node"`
	// Mode is single, clustered or external.
	Mode string `json:"mode"`
	// Writable is true while this node can store writes (its heartbeat is
	// being stored); WritableError says why not.
	Writable      bool   `json:"writable"`
	WritableError string `json:"writableError,omitempty"`
	// Members are the nodes whose heartbeat the nodes bucket holds (a
	// single node: itself).
	Members []ClusterMember `json:"members"`
	// Routes are this node's server's routes to the other servers
	// (clustered mode; RoutesKnown is false in external mode).
	Routes      []ClusterRoute `json:"routes"`
	RoutesKnown bool           `json:"routesKnown"`
	// Meta is the JetStream meta group.
	Meta ClusterMeta `json:"meta"`
	// Assets are the streams and buckets, each with its leader and
	// replicas.
	Assets []ClusterAsset `json:"assets"`
	// Leases are the once-per-cluster work items (poll partitions and
	// periodic jobs) and their owners.
	Leases []ClusterLease `json:"leases"`
	// Delivery is the state of the shared partition consumers.
	Delivery ClusterDelivery `json:"delivery"`
	// Errors names the parts that could not be read (a node cut off from
	// its cluster reads little); the rest of the view still answers.
	Errors []string `json:"errors,omitempty"`
}

// ClusterMember is one node as its heartbeat describes it.
type ClusterMember struct {
	Name      string    `json:"name"`
	APIURL    string    `json:"apiUrl,omitempty"`
	ClientURL string    `json:"clientUrl,omitempty"`
	StartedAt time.Time `json:"startedAt,omitzero"`
	BeatAt    time.Time `json:"beatAt,omitzero"`
	// Live is false for a heartbeat older than bus.member_ttl (a node
	// that stopped beating and whose key has not aged out yet).
	Live bool `json:"live"`
	// Self marks the node that answered.
	Self bool `json:"self,omitempty"`
	// Adapters are the third-party adapters the node discovered, and as
	// unavailable ("not installed on this node") those another live member
	// has and it lacks.
	Adapters []ClusterAdapter `json:"adapters,omitempty"`
}

// Adapter states of a ClusterAdapter.
const (
	// AdapterRunning: its process runs on the node.
	AdapterRunning = "running"
	// AdapterIdle: discovered, not started yet (it starts on first use).
	AdapterIdle = "idle"
	// AdapterUnavailable: it failed (Reason), or the node lacks it.
	AdapterUnavailable = "unavailable"
)

// ClusterAdapter is one adapter on one node.
type ClusterAdapter struct {
	Slug   string `json:"slug"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// ClusterRoute is this node's server's route to one other server.
type ClusterRoute struct {
	Name        string    `json:"name"`
	Address     string    `json:"address"`
	Connections int       `json:"connections"`
	Solicited   bool      `json:"solicited"`
	RTT         string    `json:"rtt,omitempty"`
	Since       time.Time `json:"since,omitzero"`
}

// ClusterMeta is the JetStream meta group (which server leads JetStream's
// own state, and its peers). Known is false in external mode: a client
// account cannot see it (Note says where to look).
type ClusterMeta struct {
	Known        bool          `json:"known"`
	Cluster      string        `json:"cluster,omitempty"`
	Leader       string        `json:"leader,omitempty"`
	Size         int           `json:"size,omitempty"`
	QuorumNeeded int           `json:"quorumNeeded,omitempty"`
	Peers        []ClusterPeer `json:"peers"`
	Note         string        `json:"note,omitempty"`
}

// ClusterPeer is one server of a Raft group (the meta group, or a
// stream's). ActiveMs is how long ago it was last heard from.
type ClusterPeer struct {
	Name     string `json:"name"`
	Leader   bool   `json:"leader,omitempty"`
	Self     bool   `json:"self,omitempty"`
	Current  bool   `json:"current"`
	Offline  bool   `json:"offline,omitempty"`
	ActiveMs int64  `json:"activeMs,omitempty"`
	Lag      uint64 `json:"lag,omitempty"`
}

// ClusterAsset is one stream or KV bucket: its leader and replicas.
type ClusterAsset struct {
	// Name is the stream name, or the bucket name for a bucket.
	Name string `json:"name"`
	// Kind is "stream" or "bucket".
	Kind string `json:"kind"`
	// Replicas is the configured replica count.
	Replicas int    `json:"replicas"`
	Leader   string `json:"leader,omitempty"`
	// State is current, lagging, no_leader or unknown.
	State string        `json:"state"`
	Peers []ClusterPeer `json:"peers"`
	Error string        `json:"error,omitempty"`
}

// ClusterLease is one work item and who owns it: Owner is "" while no
// node holds it (it is being handed over).
type ClusterLease struct {
	// Item is poll.<partition> or job.<name>.
	Item  string    `json:"item"`
	Owner string    `json:"owner"`
	Since time.Time `json:"since,omitzero"`
}

// ClusterDelivery is the delivery side: every live node pulls from the
// same durable consumer of each partition (deliver-<p>), one event in
// flight per partition.
type ClusterDelivery struct {
	Note       string             `json:"note"`
	Partitions []ClusterPartition `json:"partitions"`
}

// ClusterPartition is one partition consumer's state.
type ClusterPartition struct {
	Partition int    `json:"partition"`
	Consumer  string `json:"consumer"`
	Leader    string `json:"leader,omitempty"`
	// Pending is the number of events not yet delivered to any node;
	// AckPending those delivered and not yet acknowledged.
	Pending    uint64 `json:"pending"`
	AckPending int    `json:"ackPending"`
	// Waiting is the number of pull requests waiting (nodes ready).
	Waiting int    `json:"waiting"`
	Error   string `json:"error,omitempty"`
}

// ClusterRemove is the body of POST /cluster/remove.
type ClusterRemove struct {
	// Node is the name of the node to remove.
	Node string `json:"node"`
	// Force removes a node whose heartbeat is still current.
	Force bool `json:"force,omitempty"`
}

// ClusterRemoved is the answer of POST /cluster/remove (under "removed").
type ClusterRemoved struct {
	Node string `json:"node"`
	// PeerRemoved: the node's server left the JetStream meta group.
	PeerRemoved bool `json:"peerRemoved"`
	// MemberRemoved: its heartbeat was deleted from the nodes bucket.
	MemberRemoved bool `json:"memberRemoved"`
	// LeasesReleased is how many leases it held that were released.
	LeasesReleased int `json:"leasesReleased"`
	// Note says what is left to the operator (external mode: the peer).
	Note string `json:"note,omitempty"`
}

// Cluster is the operator's view of the cluster and the removal of a lost
// node. Errors are *sentinel.Error values with catalogue codes.
type Cluster interface {
	// View reads the cluster's state as this node sees it. Parts that
	// cannot be read say so in place (an asset's Error) rather than
	// failing the view.
	View(ctx context.Context) (ClusterView, error)
	// Remove permanently removes a lost node: its JetStream peer (embedded
	// mode), its heartbeat and its leases. Errors: invalid_input (no or a
	// malformed name), not_clustered (a single node), node_live (its
	// heartbeat is current and Force is false, or it is the answering
	// node), node_not_found (neither a member nor a peer),
	// peer_remove_failed (JetStream refused or did not answer).
	Remove(ctx context.Context, req ClusterRemove) (ClusterRemoved, error)
}

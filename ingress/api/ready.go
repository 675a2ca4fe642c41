package api

import "time"

// CodeNotReady answers every request a node cannot serve yet or any more
// (503): while it waits for its peers, while it provisions and wires up,
// while it stops. Its reason says which.
const CodeNotReady = "not_ready"

// Reasons a node is not ready: the reason of /readyz's 503 and of a
// not_ready answer. A ready node that cannot store writes answers its
// writes with the same code as its reason (cluster_unavailable,
// storage_full).
const (
	// ReasonWaitingForPeers: an embedded cluster without a JetStream meta
	// leader yet (a fresh cluster needs every server of cluster.routes up,
	// a formed one a majority).
	ReasonWaitingForPeers = "waiting_for_peers"
	// ReasonWaitingForJetStream: external mode, connected to nats.url,
	// whose JetStream does not answer yet.
	ReasonWaitingForJetStream = "waiting_for_jetstream"
	// ReasonStarting: JetStream answers; the node provisions its streams
	// and buckets and starts its runtime.
	ReasonStarting = "starting"
	// ReasonStopping: the node is shutting down.
	ReasonStopping = "stopping"
	// ReasonUnavailable: the node's bus connection is down.
	ReasonUnavailable = "unavailable"
)

// NotReady is why a node cannot work: the answer Health.Ready gives
// while it cannot, and the body of /readyz's 503 (with ok and error).
type NotReady struct {
	// Reason is one of the Reason* codes, cluster_unavailable or
	// storage_full.
	Reason string `json:"reason"`
	// Message says it for a person.
	Message string `json:"message"`
	// Routes is, while waiting_for_peers, how many other servers of the
	// cluster this node's server has a route to, and Peers their names.
	Routes *int     `json:"routes,omitempty"`
	Peers  []string `json:"peers,omitempty"`
	// WaitingMs is, while waiting, how long the node has waited so far.
	WaitingMs int64 `json:"waitingMs,omitempty"`
}

func (e *NotReady) Error() string { return e.Reason + ": " + e.Message }

// Waited sets WaitingMs from the start of the wait.
func (e *NotReady) Waited(since, now time.Time) *NotReady {
	if !since.IsZero() {
		e.WaitingMs = max(now.Sub(since).Milliseconds(), 1)
	}
	return e
}

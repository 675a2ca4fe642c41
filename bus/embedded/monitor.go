package embedded

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Route is this server's route state to one other server of its cluster
// (route pooling opens several connections to each).
type Route struct {
	// Name is the remote server's name (its node name).
	Name string `json:"name"`
	// Address is the remote host:port of the first connection.
	Address string `json:"address"`
	// Connections is the number of route connections to it.
	Connections int `json:"connections"`
	// Solicited reports whether this server dialled the first connection.
	Solicited bool `json:"solicited"`
	// RTT is the last measured round trip ("" before the first).
	RTT string `json:"rtt,omitempty"`
	// Since is when the oldest connection was established.
	Since time.Time `json:"since"`
}

// Routes returns the server's routes, one per remote server, by name.
// A single server has none.
func (s *Server) Routes() ([]Route, error) {
	rz, err := s.current().Routez(&server.RoutezOptions{})
	if err != nil {
		return nil, fmt.Errorf("embedded: routes: %w", err)
	}
	by := map[string]*Route{}
	for _, ri := range rz.Routes {
		name := ri.RemoteName
		if name == "" {
			name = ri.RemoteID
		}
		r := by[name]
		if r == nil {
			r = &Route{Name: name, Address: net.JoinHostPort(ri.IP, strconv.Itoa(ri.Port)), Solicited: ri.DidSolicit, RTT: ri.RTT, Since: ri.Start}
			by[name] = r
		}
		r.Connections++
		if !ri.Start.IsZero() && ri.Start.Before(r.Since) {
			r.Since = ri.Start
		}
	}
	out := make([]Route, 0, len(by))
	for _, r := range by {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// MetaPeer is one server of the JetStream meta group as this server sees
// it (a follower's view of the other followers may lag the leader's).
type MetaPeer struct {
	Name    string        `json:"name"`
	ID      string        `json:"id"`
	Self    bool          `json:"self,omitempty"`
	Leader  bool          `json:"leader,omitempty"`
	Current bool          `json:"current"`
	Offline bool          `json:"offline,omitempty"`
	Active  time.Duration `json:"active"`
	Lag     uint64        `json:"lag,omitempty"`
}

// MetaState is the JetStream meta group: who leads, who takes part, and
// how many must agree.
type MetaState struct {
	Cluster      string     `json:"cluster"`
	Leader       string     `json:"leader,omitempty"`
	Size         int        `json:"size"`
	QuorumNeeded int        `json:"quorumNeeded"`
	Peers        []MetaPeer `json:"peers"`
}

// Meta returns the JetStream meta group as this server sees it; ok is
// false for a single server (it has no meta group) or before JetStream
// runs.
func (s *Server) Meta() (MetaState, bool) {
	ns := s.current()
	jsz, err := ns.Jsz(&server.JSzOptions{})
	if err != nil || jsz == nil || jsz.Meta == nil {
		return MetaState{}, false
	}
	m := jsz.Meta
	st := MetaState{Cluster: m.Name, Leader: m.Leader, Size: m.Size, QuorumNeeded: m.QuorumNeeded}
	self := MetaPeer{Name: ns.Name(), ID: ns.Node(), Self: true, Current: ns.JetStreamIsCurrent(), Leader: m.Leader == ns.Name()}
	st.Peers = append(st.Peers, self)
	for _, p := range m.Replicas {
		if p == nil || p.Peer == self.ID {
			continue
		}
		st.Peers = append(st.Peers, MetaPeer{Name: p.Name, ID: p.Peer, Leader: p.Name == m.Leader, Current: p.Current || p.Name == m.Leader,
			Offline: p.Offline, Active: p.Active, Lag: p.Lag})
	}
	sort.Slice(st.Peers, func(i, j int) bool { return st.Peers[i].Name < st.Peers[j].Name })
	return st, true
}

// MetaCurrent reports whether this server's JetStream meta group has a
// leader this server follows (or is), up to date: JetStream answers. A
// single server is always current once JetStream runs.
func (s *Server) MetaCurrent() bool { return s.current().JetStreamIsCurrent() }

// InMajority reports whether this server has routes to enough servers of
// its JetStream meta group to form a quorum with them (itself included):
// a node that is, is in an election at worst, not cut off. ok is false for
// a single server.
func (s *Server) InMajority() (in, ok bool) {
	meta, ok := s.Meta()
	if !ok || meta.Size == 0 {
		return false, false
	}
	routes, err := s.Routes()
	if err != nil {
		return false, true
	}
	peers := map[string]bool{}
	for _, p := range meta.Peers {
		peers[p.Name] = true
	}
	reach := 1
	for _, r := range routes {
		if peers[r.Name] {
			reach++
		}
	}
	need := meta.QuorumNeeded
	if need <= 0 {
		need = meta.Size/2 + 1
	}
	return reach >= need, true
}

// StoreUsed is the file storage this server's JetStream holds now, in
// bytes (its own replicas only: in a cluster, what counts against its
// MaxStore).
func (s *Server) StoreUsed() (int64, error) {
	jsz, err := s.current().Jsz(&server.JSzOptions{})
	if err != nil {
		return 0, fmt.Errorf("embedded: jetstream usage: %w", err)
	}
	return int64(jsz.Store), nil
}

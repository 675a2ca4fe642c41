package cluster

import (
	"fmt"
	"time"
)

// ElectionGrace bounds how long a node that still reaches a majority of
// its peers stays writable without storing a heartbeat (a raft election
// takes 4-9 s in nats-server).
const ElectionGrace = 15 * time.Second

// Writable is nil while this node's heartbeat is being stored, else the
// reason it is not.
func (n *Node) Writable() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.writableLocked()
}

func (n *Node) writableLocked() error {
	if n.beatOK.IsZero() {
		if n.lastErr != nil {
			return fmt.Errorf("%w: %v", ErrNoQuorum, n.lastErr)
		}
		return fmt.Errorf("%w: no heartbeat stored yet", ErrNoQuorum)
	}
	age := n.now().Sub(n.beatSent)
	stale := max(3*n.cfg.Heartbeat+time.Second, n.cfg.MemberTTL)
	if age > stale && age <= ElectionGrace && n.inMajority != nil && n.inMajority() {
		return nil // a leader election of the nodes bucket: writes are retried through it
	}
	if age > stale {
		if n.lastErr != nil {
			return fmt.Errorf("%w: last heartbeat stored %s ago: %v", ErrNoQuorum, age.Round(time.Millisecond), n.lastErr)
		}
		return fmt.Errorf("%w: last heartbeat stored %s ago", ErrNoQuorum, age.Round(time.Millisecond))
	}
	return nil
}

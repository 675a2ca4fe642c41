package app

import (
	"context"
	"errors"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Ready implements api.Health: nil once the node is open (Start) and
// while it can store writes; else an *api.NotReady naming why
// (waiting_for_peers, waiting_for_jetstream, starting, stopping,
// cluster_unavailable, storage_full, unavailable).
func (a *App) Ready(context.Context) error {
	switch {
	case a.stopped.Load():
		return &api.NotReady{Reason: api.ReasonStopping, Message: "the node is stopping"}
	case !a.started.Load():
		phase, since := a.boot.get()
		if phase == phaseWaiting {
			return a.waiting()
		}
		return (&api.NotReady{Reason: api.ReasonStarting,
			Message: "JetStream answers; the node is provisioning its streams and starting"}).Waited(since, a.now())
	}
	if err := a.Writable(); err != nil {
		var de *sentinel.Error
		if errors.As(err, &de) {
			return &api.NotReady{Reason: de.Code, Message: de.Error()}
		}
		return &api.NotReady{Reason: sentinel.CodeClusterUnavailable, Message: err.Error()}
	}
	return nil
}

// Writable implements api.Health: nil while this node can store writes;
// a full store answers its storage_full error (runtime/storage), a bus
// connection down cluster_unavailable (unavailable on a single node), a
// node cut off from its cluster's quorum a plain error
// (cluster_unavailable where it is answered).
func (a *App) Writable() error {
	if a.storage != nil {
		if err := a.storage.Err(); err != nil {
			return err
		}
	}
	if !a.Bus.Connected() {
		if a.Cluster != nil {
			return sentinel.Errorf(sentinel.CodeClusterUnavailable, "bus connection is down")
		}
		return sentinel.Errorf(sentinel.CodeUnavailable, "bus connection is down")
	}
	return a.owner().Writable()
}

package app

import (
	"context"
	"errors"
)

// Ready implements api.Health: the node is ready once started, while its
// bus connection is up and while it can store writes.
func (a *App) Ready(context.Context) error {
	if !a.started.Load() || a.stopped.Load() {
		return errors.New("node is starting or stopping")
	}
	return a.Writable()
}

// Writable implements api.Health: nil while this node can store writes;
// a full store answers its storage_full error (runtime/storage).
func (a *App) Writable() error {
	if a.storage != nil {
		if err := a.storage.Err(); err != nil {
			return err
		}
	}
	if !a.Bus.NC.IsConnected() {
		return errors.New("bus connection is down")
	}
	return a.owner().Writable()
}

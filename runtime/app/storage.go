package app

import (
	"context"
	"sync"

	"github.com/agentproto/sentinel/runtime/storage"
)

// DefaultMinFree is nats.min_free's default: writes are refused while the
// store's disk has less free space (64 MiB).
const DefaultMinFree = 64 << 20

// newStorageGuard makes the storage guard over the embedded server's store
// (the filesystem's free space, the server's JetStream limit, the restart
// after a full disk), or, in external mode, over JetStream refusals only
// (the servers' disks and limits are theirs).
func (a *App) newStorageGuard() *storage.Guard {
	cfg := storage.Config{MinFree: a.Cfg.NATS.MinFree, Interval: a.Cfg.NATS.StorageCheck}
	opts := []storage.Option{storage.WithLogger(a.Log.With("component", "storage"))}
	if srv := a.nats; srv != nil {
		// This server's own use against its own limit (in a cluster an
		// account's figure counts every replica on every server).
		cfg.Dir, cfg.MaxStore = srv.StoreDir(), srv.MaxStore()
		opts = append(opts, storage.WithServer(srv), storage.WithUsed(func(context.Context) (int64, error) { return srv.StoreUsed() }))
	}
	return storage.New(cfg, opts...)
}

// runStorageGuard checks storage once, then every nats.storage_check,
// until the node stops.
func (a *App) runStorageGuard(ctx context.Context) {
	a.storage.Check(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	gctx, cancel := context.WithCancel(ctx)
	go func() { defer wg.Done(); a.storage.Run(gctx) }()
	a.push("storage guard", func(context.Context) error { cancel(); wg.Wait(); return nil })
}

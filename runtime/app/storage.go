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
// (the filesystem's free space, JetStream's limit, the restart after a
// full disk), or, in external mode, over JetStream refusals only.
func (a *App) newStorageGuard() *storage.Guard {
	cfg := storage.Config{
		MinFree:  a.Cfg.NATS.MinFree,
		Interval: a.Cfg.NATS.StorageCheck,
		Log:      a.Log.With("component", "storage"),
		Used: func(ctx context.Context) (int64, error) {
			ai, err := a.Bus.JS.AccountInfo(ctx)
			if err != nil {
				return 0, err
			}
			return int64(ai.Store), nil
		},
	}
	if a.nats != nil {
		cfg.Dir, cfg.Server, cfg.MaxStore = a.nats.StoreDir(), a.nats, a.nats.MaxStore()
	}
	return storage.New(cfg)
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

// Package storage is the node's storage guard. It watches the free space
// of the filesystem under the embedded server's store and, when a limit is
// configured, JetStream's own usage (nats.max_store), and answers
// storage_full for writes while either is short, before JetStream itself
// fails them. nats-server leaves a stream that met a full filesystem
// broken (every later write to it goes unanswered) until the server
// restarts, so once space is back after such an episode the guard restarts
// the embedded server, once.
package storage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
)

// Server is the embedded nats-server as the guard sees it.
type Server interface {
	// JetStreamEnabled is false once nats-server disabled JetStream.
	JetStreamEnabled() bool
	// Restart replaces the running nats-server with a new one on the same
	// store.
	Restart() error
}

// Config configures a Guard.
type Config struct {
	// Dir is the store folder whose filesystem is watched; empty (external
	// NATS) watches no filesystem.
	Dir string
	// MinFree is the free space (bytes) under which writes are refused;
	// writes resume once twice as much is free.
	MinFree uint64
	// MaxStore is JetStream's storage limit (nats.max_store); 0: none.
	// The limit is checked only with WithUsed.
	MaxStore int64
	// Interval between checks (default 2s).
	Interval time.Duration
}

// Option sets one of a guard's optional collaborators.
type Option func(*Guard)

// WithUsed reads JetStream's storage in use (bytes), checked against
// Config.MaxStore.
func WithUsed(used func(ctx context.Context) (int64, error)) Option {
	return func(g *Guard) { g.used = used }
}

// WithServer restarts srv after a filesystem-full episode (default:
// never).
func WithServer(srv Server) Option { return func(g *Guard) { g.server = srv } }

// WithFree reads the free bytes of the filesystem under dir (default
// FreeBytes; tests replace it).
func WithFree(free func(dir string) (uint64, error)) Option { return func(g *Guard) { g.free = free } }

// WithLogger logs to l (default: discard).
func WithLogger(l *slog.Logger) Option { return func(g *Guard) { g.log = l } }

// Guard holds the current storage state. The zero value is not usable;
// make one with New. Err and Trip are safe for concurrent use.
type Guard struct {
	cfg    Config
	used   func(ctx context.Context) (int64, error)
	server Server
	free   func(dir string) (uint64, error)
	log    *slog.Logger

	mu sync.Mutex
	// err is non-nil while writes are refused.
	err error
	// episode is true while, or since, the filesystem was short: the
	// server is restarted when it ends.
	episode  bool
	restarts int
	// lastRestart spaces restarts RestartGap apart.
	lastRestart time.Time
}

// RestartGap is the least time between two restarts of the server.
const RestartGap = 15 * time.Second

// New returns a guard; call Check once, then Run.
func New(cfg Config, opts ...Option) *Guard {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	g := &Guard{cfg: cfg}
	for _, o := range opts {
		o(g)
	}
	if g.free == nil {
		g.free = FreeBytes
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g
}

// Err is nil while the node can store writes, else a *sentinel.Error with
// code storage_full naming the reason.
func (g *Guard) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Restarts counts the embedded server restarts the guard made.
func (g *Guard) Restarts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.restarts
}

// Trip records that JetStream refused a write for storage: writes are
// refused until a check finds room.
func (g *Guard) Trip() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = full("JetStream refused a write: its storage is full")
	}
}

// Run checks every Interval until ctx ends.
func (g *Guard) Run(ctx context.Context) {
	t := time.NewTicker(g.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.Check(ctx)
		}
	}
}

// Check reads the storage state once, restarting the server when a
// filesystem-full episode has ended.
func (g *Guard) Check(ctx context.Context) {
	diskShort, reason := g.disk()
	jsOff := g.server != nil && !g.server.JetStreamEnabled()
	switch {
	case diskShort:
	case jsOff:
		reason = "nats-server disabled JetStream (its disk was full)"
	default:
		reason = g.limit(ctx)
	}
	g.mu.Lock()
	was := g.err
	if (diskShort || jsOff) && g.server != nil {
		g.episode = true
	}
	restart := !diskShort && g.episode && g.server != nil && time.Since(g.lastRestart) >= RestartGap
	switch {
	case restart:
		g.err = full("restarting the embedded server after the disk was full")
	case g.episode && reason == "":
		reason = "waiting to restart the embedded server after the disk was full"
		g.err = full(reason)
	case reason != "":
		g.err = full(reason)
	default:
		g.err = nil
	}
	g.mu.Unlock()
	if reason != "" && was == nil {
		g.log.Error("storage full: refusing writes", "reason", reason)
	}
	if restart {
		g.restart()
		return
	}
	if reason == "" && was != nil {
		g.log.Info("storage has room again: accepting writes")
	}
}

// restart restarts the server; writes stay refused until it is back.
func (g *Guard) restart() {
	g.log.Warn("restarting the embedded nats-server: the disk was full and has room again")
	err := g.server.Restart()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastRestart = time.Now()
	if err != nil {
		g.err = full(fmt.Sprintf("restarting the embedded server failed: %v", err))
		g.log.Error("embedded nats-server restart failed", "err", err)
		return
	}
	g.episode, g.err = false, nil
	g.restarts++
	g.log.Info("embedded nats-server restarted: accepting writes")
}

// disk reports whether the store's filesystem is short of MinFree (twice
// MinFree while writes are refused: room to spare before resuming).
func (g *Guard) disk() (short bool, reason string) {
	if g.cfg.Dir == "" || g.cfg.MinFree == 0 {
		return false, ""
	}
	free, err := g.free(g.cfg.Dir)
	if err != nil {
		return false, ""
	}
	floor := g.cfg.MinFree
	if g.Err() != nil {
		floor *= 2
	}
	if free < floor {
		return true, fmt.Sprintf("%d bytes free on the store's disk, under nats.min_free (%d)", free, g.cfg.MinFree)
	}
	return false, ""
}

// limit names a reached JetStream storage limit, if any. A refusal
// (Trip) with no limit to read clears at the next check.
func (g *Guard) limit(ctx context.Context) string {
	if g.cfg.MaxStore <= 0 || g.used == nil {
		return ""
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	used, err := g.used(cctx)
	if err != nil {
		return ""
	}
	// Refuse a little before the limit (JetStream refuses a message that
	// would cross it); once refused, resume below 90%.
	high := g.cfg.MaxStore - g.cfg.MaxStore/50
	if g.Err() != nil {
		high = g.cfg.MaxStore - g.cfg.MaxStore/10
	}
	if used >= high {
		return fmt.Sprintf("JetStream storage %d of %d bytes (nats.max_store)", used, g.cfg.MaxStore)
	}
	return ""
}

func full(reason string) error {
	return sentinel.Errorf(sentinel.CodeStorageFull, "storage is full: %s", reason)
}

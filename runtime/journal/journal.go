package journal

import (
	"context"
	"fmt"
	"time"

	"github.com/agentproto/sentinel/bus"
)

// Config is the journal's configuration (config keys journal.*).
type Config struct {
	// MaxAge bounds how long entries are kept (default 168h).
	MaxAge time.Duration `mapstructure:"max_age"`
	// MaxBytes bounds the journal's size: past it the oldest decisions
	// are dropped first. 0 (the default) is DefaultMaxBytes of the
	// JetStream storage limit.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// QueueSize bounds the entries waiting to be written (default 4096);
	// past it entries are dropped and counted
	// (sentinel_journal_dropped_total{reason="overflow"}).
	QueueSize int `mapstructure:"queue_size"`
	// DryRunScan bounds the entries one dry run reads, the newest ones
	// within MaxAge (default DefaultDryRunScan).
	DryRunScan int `mapstructure:"dry_run_scan"`
}

// DefaultDryRunScan is the default of Config.DryRunScan.
const DefaultDryRunScan = 20_000

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{MaxAge: DefaultMaxAge, QueueSize: DefaultQueueSize, DryRunScan: DefaultDryRunScan}
}

// DefaultMaxBytes is the journal's size bound when journal.max_bytes is 0:
// a tenth of the JetStream storage limit (JetStream reserves a stream's
// MaxBytes against it), at most 256 MiB, at least 1 MiB; 256 MiB when the
// limit is unknown (external mode: 0).
func DefaultMaxBytes(storeLimit int64) int64 {
	if storeLimit <= 0 {
		return DefaultMaxBytesCap
	}
	return max(min(storeLimit/10, DefaultMaxBytesCap), 1<<20)
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.MaxAge < 0 || (c.MaxAge > 0 && c.MaxAge < time.Minute) {
		return fmt.Errorf("journal.max_age must be at least 1m (got %s)", c.MaxAge)
	}
	if c.MaxBytes < 0 || (c.MaxBytes > 0 && c.MaxBytes < 1<<20) {
		return fmt.Errorf("journal.max_bytes must be at least 1048576 (1 MiB; got %d)", c.MaxBytes)
	}
	if c.QueueSize < 0 {
		return fmt.Errorf("journal.queue_size must not be negative (0 takes the default)")
	}
	if c.DryRunScan < 0 || c.DryRunScan > 1_000_000 {
		return fmt.Errorf("journal.dry_run_scan must be within 0..1000000 (0 takes the default)")
	}
	return nil
}

// Journal is the node's journal: the writer the pipeline records to and
// the reader of the surfaces.
type Journal struct {
	*Writer
	*Reader
	MaxAge time.Duration
	// DryRunScan bounds the entries one dry run reads.
	DryRunScan int
}

// Bus is what the journal needs of the bus (*bus.Bus is one): its stream
// provisioned, and an asynchronous publisher of the writer's own.
type Bus interface {
	bus.Provisioner
	AsyncPublishers
}

// Open provisions the journal stream (replicas: the bus's replica count,
// which decides its persist mode) and returns a started writer and a
// reader. Stop the writer (Journal.Stop) after the delivery workers.
func Open(ctx context.Context, b Bus, replicas int, cfg Config, wcfg WriterConfig, opts ...WriterOption) (*Journal, error) {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	s, err := OpenStream(ctx, b, replicas, cfg.MaxAge, cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	wcfg.QueueSize = cfg.QueueSize
	w, err := NewWriter(b, wcfg, opts...)
	if err != nil {
		return nil, fmt.Errorf("journal writer: %w", err)
	}
	w.Start()
	if cfg.DryRunScan <= 0 {
		cfg.DryRunScan = DefaultDryRunScan
	}
	return &Journal{Writer: w, Reader: &Reader{Stream: s}, MaxAge: cfg.MaxAge, DryRunScan: cfg.DryRunScan}, nil
}

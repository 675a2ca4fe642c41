package adapter

import (
	"errors"
	"time"
)

// Config tunes discovery and the adapter processes (the adapters.* keys).
type Config struct {
	// Paths are directories searched for sentinel-adapter-<slug>
	// executables after <home>/adapters and before PATH.
	Paths []string `mapstructure:"paths"`
	// NoPath skips PATH in discovery (only <home>/adapters and Paths).
	NoPath bool `mapstructure:"no_path"`
	// CallTimeout bounds one call; an adapter that does not answer in
	// time is killed and restarted (with backoff).
	CallTimeout time.Duration `mapstructure:"call_timeout"`
	// HandshakeTimeout bounds a start: the process starting and answering
	// describe.
	HandshakeTimeout time.Duration `mapstructure:"handshake_timeout"`
	// MaxMessageBytes caps one message (one line) either way.
	MaxMessageBytes int `mapstructure:"max_message_bytes"`
	// MaxInFlight bounds the calls in flight to one adapter at once.
	MaxInFlight int `mapstructure:"max_in_flight"`
	// RestartMin and RestartMax bound the backoff between restarts of an
	// adapter that failed (doubling from RestartMin).
	RestartMin time.Duration `mapstructure:"restart_min"`
	RestartMax time.Duration `mapstructure:"restart_max"`
}

// DefaultConfig returns the defaults: 20 s per call, 5 s per handshake,
// 4 MiB per message, 16 calls in flight, restarts after 1 s doubling to
// 5 min.
func DefaultConfig() Config {
	return Config{
		Paths:            []string{},
		CallTimeout:      20 * time.Second,
		HandshakeTimeout: 5 * time.Second,
		MaxMessageBytes:  4 << 20,
		MaxInFlight:      16,
		RestartMin:       time.Second,
		RestartMax:       5 * time.Minute,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	switch {
	case c.CallTimeout <= 0 || c.HandshakeTimeout <= 0:
		return errors.New("adapters: call_timeout and handshake_timeout must be positive")
	case c.MaxMessageBytes < 64<<10:
		return errors.New("adapters: max_message_bytes must be at least 65536")
	case c.MaxInFlight < 1:
		return errors.New("adapters: max_in_flight must be at least 1")
	case c.RestartMin <= 0 || c.RestartMax < c.RestartMin:
		return errors.New("adapters: restart_min must be positive and at most restart_max")
	}
	return nil
}

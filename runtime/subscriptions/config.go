package subscriptions

import (
	"errors"
	"time"
)

// Config tunes MCP Events (config keys mcp_events.*).
type Config struct {
	// Retention is how long the feeds keep delivered events (default 24h);
	// a cursor older than what is kept answers truncated.
	Retention time.Duration `mapstructure:"retention"`
	// PollIdleExpiry removes a poll subscription nobody polled for this
	// long (default 10m).
	PollIdleExpiry time.Duration `mapstructure:"poll_idle_expiry"`
	// PushLinger keeps a push subscription this long after its last stream
	// closed, so a client that reconnects with its cursor within it misses
	// nothing (default 0: the subscription ends with its stream).
	PushLinger time.Duration `mapstructure:"push_linger"`
	// Heartbeat is the push heartbeat interval (default 15s; the SEP asks
	// for at least every 30s).
	Heartbeat time.Duration `mapstructure:"heartbeat"`
	// Sweep is how often lapsed subscriptions are removed (default 5s).
	Sweep time.Duration `mapstructure:"sweep"`
	// MaxSubscriptions caps the subscriptions of the service (default
	// 1000; ResourceExhausted past it).
	MaxSubscriptions int `mapstructure:"max_subscriptions"`

	// Webhook offers webhook delivery (events/subscribe; default true).
	Webhook bool `mapstructure:"webhook"`
	// AllowPrivateCallbacks lets callbacks resolve to private and loopback
	// addresses and use plain http (tests, local receivers).
	AllowPrivateCallbacks bool `mapstructure:"allow_private_callbacks"`
	// CallbackAllowlist are callback URLs (https://host[:port][/path])
	// whose endpoints count as verified without the challenge handshake: a
	// callback on the same scheme, host and port, at the entry's path or
	// below it, is allowlisted (allowlist.go).
	CallbackAllowlist []string `mapstructure:"callback_allowlist"`
	// TTLMin, TTLMax, TTLDefault bound the granted subscription TTL
	// (defaults 1m, 24h, 1h).
	TTLMin     time.Duration `mapstructure:"ttl_min"`
	TTLMax     time.Duration `mapstructure:"ttl_max"`
	TTLDefault time.Duration `mapstructure:"ttl_default"`
	// RetryBackoff is the first retry delay, doubled per attempt up to 10
	// times it (default 5s); RetryAttempts bounds the attempts of one event
	// (default 5).
	RetryBackoff  time.Duration `mapstructure:"retry_backoff"`
	RetryAttempts int           `mapstructure:"retry_attempts"`
	// Timeout bounds one POST (default 5s).
	Timeout time.Duration `mapstructure:"callback_timeout"`
	// NoExpiry grants ttlMs: null as asked (refreshBefore null: the
	// subscription lives until unsubscribed or dropped, across restarts);
	// without it a null suggestion gets ttl_max (default false).
	NoExpiry bool `mapstructure:"no_expiry"`
	// Delivery is suspended (deliveryStatus.active false) when at least
	// SuspendMinAttempts POSTs within the rolling SuspendWindow failed at
	// a rate of SuspendFailureRate or more (defaults 60m, 100, 0.95: the
	// SEP's example); a refresh reactivates it.
	SuspendWindow      time.Duration `mapstructure:"suspend_window"`
	SuspendMinAttempts int           `mapstructure:"suspend_min_attempts"`
	SuspendFailureRate float64       `mapstructure:"suspend_failure_rate"`
	// DropSuspendedAfter ends a no-expiry subscription suspended this
	// long, with a terminated envelope (default 24h).
	DropSuspendedAfter time.Duration `mapstructure:"drop_suspended_after"`
	// VerifyPerHostPerMinute bounds the verification challenges this node
	// sends one host (default 10 a minute).
	VerifyPerHostPerMinute int `mapstructure:"verify_per_host_per_minute"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Retention:        24 * time.Hour,
		PollIdleExpiry:   10 * time.Minute,
		Heartbeat:        15 * time.Second,
		Sweep:            5 * time.Second,
		MaxSubscriptions: 1000,
		Webhook:          true,

		CallbackAllowlist: []string{},
		TTLMin:            time.Minute, TTLMax: 24 * time.Hour, TTLDefault: time.Hour,
		RetryBackoff: 5 * time.Second, RetryAttempts: 5, Timeout: 5 * time.Second,

		SuspendWindow: time.Hour, SuspendMinAttempts: 100, SuspendFailureRate: 0.95,
		DropSuspendedAfter: 24 * time.Hour, VerifyPerHostPerMinute: 10,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	w := c
	switch {
	case c.Retention < time.Second:
		return errors.New("mcp_events.retention must be at least 1s")
	case c.PollIdleExpiry < time.Second:
		return errors.New("mcp_events.poll_idle_expiry must be at least 1s")
	case c.PushLinger < 0:
		return errors.New("mcp_events.push_linger must not be negative")
	case c.Heartbeat < 100*time.Millisecond || c.Heartbeat > 30*time.Second:
		return errors.New("mcp_events.heartbeat must be within 100ms..30s")
	case c.Sweep < 100*time.Millisecond:
		return errors.New("mcp_events.sweep must be at least 100ms")
	case c.MaxSubscriptions < 1:
		return errors.New("mcp_events.max_subscriptions must be at least 1")
	case w.TTLMin < time.Second || w.TTLMax < w.TTLMin || w.TTLDefault < w.TTLMin || w.TTLDefault > w.TTLMax:
		return errors.New("mcp_events.ttl_min <= ttl_default <= ttl_max, ttl_min at least 1s")
	case w.RetryBackoff < 10*time.Millisecond || w.RetryAttempts < 1 || w.RetryAttempts > 20:
		return errors.New("mcp_events.retry_backoff must be at least 10ms and retry_attempts within 1..20")
	case w.Timeout < 100*time.Millisecond:
		return errors.New("mcp_events.callback_timeout must be at least 100ms")
	case w.SuspendWindow < time.Second || w.SuspendMinAttempts < 1 || w.SuspendFailureRate <= 0 || w.SuspendFailureRate > 1:
		return errors.New("mcp_events.suspend_window must be at least 1s, suspend_min_attempts at least 1, suspend_failure_rate within (0, 1]")
	case w.DropSuspendedAfter < time.Second:
		return errors.New("mcp_events.drop_suspended_after must be at least 1s")
	case w.VerifyPerHostPerMinute < 1:
		return errors.New("mcp_events.verify_per_host_per_minute must be at least 1")
	}
	for _, e := range c.CallbackAllowlist {
		if e == "" {
			continue
		}
		if _, err := parseAllowEntry(e); err != nil {
			return err
		}
	}
	return nil
}

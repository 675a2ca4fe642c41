package bus

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LocalLocks returns how many names the locker keeps an in-process lock
// for (tests check that the map does not grow with every name ever used).
func (l *Locker) LocalLocks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.local)
}

// NewLockerOn is a locker over kv renewing every renew (tests use a
// bucket with a short TTL).
func NewLockerOn(kv jetstream.KeyValue, owner string, renew time.Duration) *Locker {
	return &Locker{kv: kv, owner: owner, renew: renew, local: map[string]*localLock{}}
}

// Provision is provision, for tests.
var Provision = provision

// ProvisionAsset is provisionAsset for tests, with have saying ready or
// not (missing).
func ProvisionAsset[T any](ctx context.Context, have func(context.Context) (T, bool, error), write func(context.Context) (T, error)) (T, error) {
	return provisionAsset(ctx, func(ctx context.Context) (T, assetState, error) {
		v, ok, err := have(ctx)
		if ok {
			return v, assetReady, err
		}
		return v, assetMissing, err
	}, write)
}

// AssetState is assetState, for tests.
type AssetState = assetState

// Asset states, for tests.
const (
	AssetMissing  = assetMissing
	AssetElecting = assetElecting
	AssetReady    = assetReady
)

// ProvisionAssetStates is provisionAsset, for tests that give the states.
func ProvisionAssetStates[T any](ctx context.Context, have func(context.Context) (T, assetState, error), write func(context.Context) (T, error)) (T, error) {
	return provisionAsset(ctx, have, write)
}

// EventsStream is the events stream's handle, for tests.
func (b *Bus) EventsStream() jetstream.Stream { return b.events }

// LocksBucket is the locks bucket's handle, for tests.
func (b *Bus) LocksBucket() jetstream.KeyValue { return b.locks }

// SetupKV is the setup bucket's handle, for tests.
func (b *Bus) SetupKV() jetstream.KeyValue { return b.setup }

// ConsumerConfig is the config of partition p's consumer this bus
// provisions (tests create it as another node would).
func (b *Bus) ConsumerConfig(p int) jetstream.ConsumerConfig { return b.consumerConfig(p) }

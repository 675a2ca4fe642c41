package sentinels

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// BusLeaderGet is the Store.LeaderGet of a node with peers: a record read
// through the records bucket's leader (bus.LeaderLast), never from a
// replica that may trail another node's write; an unknown or deleted key
// wraps sentinel.ErrNotFound.
func BusLeaderGet(b *bus.Bus) func(ctx context.Context, id string) ([]byte, uint64, error) {
	return func(ctx context.Context, id string) ([]byte, uint64, error) {
		raw, rev, err := b.LeaderLast(ctx, bus.KVStream(bus.BucketSentinels), bus.KVSubject(bus.BucketSentinels, id))
		if errors.Is(err, bus.ErrNoMessage) {
			return nil, 0, fmt.Errorf("%s: %w", id, sentinel.ErrNotFound)
		}
		return raw, rev, err
	}
}

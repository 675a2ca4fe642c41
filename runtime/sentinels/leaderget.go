package sentinels

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// LeaderReader reads the last message on a subject through its stream's
// leader (*bus.Bus is one: bus.LeaderLast).
type LeaderReader interface {
	LeaderLast(ctx context.Context, stream, subject string) ([]byte, uint64, error)
}

// BusLeaderGet is the WithLeaderGet of a node with peers: a record read
// through the records bucket's leader (bus.LeaderLast), never from a
// replica that may trail another node's write; an unknown or deleted key
// wraps sentinel.ErrNotFound.
func BusLeaderGet(b LeaderReader) func(ctx context.Context, id string) ([]byte, uint64, error) {
	return func(ctx context.Context, id string) ([]byte, uint64, error) {
		raw, rev, err := b.LeaderLast(ctx, bus.KVStream(BucketRecords), bus.KVSubject(BucketRecords, id))
		if errors.Is(err, bus.ErrNoMessage) {
			return nil, 0, fmt.Errorf("%s: %w", id, sentinel.ErrNotFound)
		}
		return raw, rev, err
	}
}

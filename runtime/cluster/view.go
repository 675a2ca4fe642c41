package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// This file reads the nodes and leases buckets for the operator's view of
// the cluster (GET /cluster) and removes a lost node's traces from them.

const memberPrefix = "node."

// ItemsOf lists every leased work item for a number of poll partitions:
// the poll partitions, then the periodic jobs.
func ItemsOf(pollPartitions int) []string {
	out := make([]string, 0, pollPartitions+len(Jobs))
	for p := 0; p < pollPartitions; p++ {
		out = append(out, PollItem(p))
	}
	for _, j := range Jobs {
		out = append(out, JobItem(j))
	}
	return out
}

// IsPollItem reports whether item is a poll partition's lease (else a
// job's).
func IsPollItem(item string) bool { return strings.HasPrefix(item, "poll.") }

// readAll returns every live entry of a bucket (one watcher pass, not a
// get per key).
func readAll(ctx context.Context, kv jetstream.KeyValue) ([]jetstream.KeyValueEntry, error) {
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	var out []jetstream.KeyValueEntry
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return out, errors.New("watcher closed")
			}
			if e == nil {
				return out, nil
			}
			out = append(out, e)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
}

// ReadMembers returns every member whose heartbeat the nodes bucket holds,
// by name. A value that does not decode shows its name only.
func ReadMembers(ctx context.Context, nodes jetstream.KeyValue) ([]Member, error) {
	entries, err := readAll(ctx, nodes)
	if err != nil {
		return nil, fmt.Errorf("cluster: read members: %w", err)
	}
	var out []Member
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Key(), memberPrefix)
		if !ok {
			continue
		}
		var m Member
		if json.Unmarshal(e.Value(), &m) != nil || m.Name == "" {
			m = Member{Name: name}
		}
		m.Name = name
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Live reports whether a member's heartbeat is current: it beat less than
// memberTTL before now (its key also ages out memberTTL after its last
// write, so a member read from the bucket is normally live; a stale beat
// is a node whose clock or process stopped).
func Live(m Member, now time.Time, memberTTL time.Duration) bool {
	return !m.BeatAt.IsZero() && now.Sub(m.BeatAt) < memberTTL
}

// RemoveMember deletes a node's heartbeat; removed is false when the
// bucket held none.
func RemoveMember(ctx context.Context, nodes jetstream.KeyValue, name string) (removed bool, err error) {
	if _, err := nodes.Get(ctx, memberPrefix+name); err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("cluster: read member %s: %w", name, err)
	}
	if err := nodes.Delete(ctx, memberPrefix+name); err != nil {
		return false, fmt.Errorf("cluster: remove member %s: %w", name, err)
	}
	return true, nil
}

// Lease is one held lease as the leases bucket records it.
type Lease struct {
	Item     string
	Owner    string
	Since    time.Time
	Revision uint64
}

// ReadLeases returns every held lease, keyed by item.
func ReadLeases(ctx context.Context, leases jetstream.KeyValue) (map[string]Lease, error) {
	entries, err := readAll(ctx, leases)
	if err != nil {
		return nil, fmt.Errorf("cluster: read leases: %w", err)
	}
	out := make(map[string]Lease, len(entries))
	for _, e := range entries {
		var v leaseValue
		_ = json.Unmarshal(e.Value(), &v)
		out[e.Key()] = Lease{Item: e.Key(), Owner: v.Owner, Since: v.Since, Revision: e.Revision()}
	}
	return out, nil
}

// ReleaseLeasesOf deletes the leases owner holds (each only at the
// revision read, so a lease taken over meanwhile stays), letting the
// preferred live members take them at their next round instead of after
// LeaseTTL. It returns how many it deleted.
func ReleaseLeasesOf(ctx context.Context, leases jetstream.KeyValue, owner string) (int, error) {
	held, err := ReadLeases(ctx, leases)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range held {
		if l.Owner != owner {
			continue
		}
		if err := leases.Delete(ctx, l.Item, jetstream.LastRevision(l.Revision)); err != nil {
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
				continue // taken over meanwhile
			}
			return n, fmt.Errorf("cluster: release lease %s of %s: %w", l.Item, owner, err)
		}
		n++
	}
	return n, nil
}

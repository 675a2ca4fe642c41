package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrSettingsMismatch is returned (wrapped, naming every difference) by
// Open when this node's shared settings differ from those the service's
// JetStream is pinned to (issue 21, item 6).
var ErrSettingsMismatch = errors.New("bus: this node's settings differ from the ones the service runs with")

// BucketSetup holds the settings every node of a service agrees on (the
// bus's own keys, `_bus.*`) and the provider setup ledger
// (runtime/sentinels, SetupBucket).
const BucketSetup = "sentinel_setup"

// SetupBucket is the setup bucket's config: the bus provisions it first,
// at Open; the ledger's opener asks for the same config (answered from
// what Open provisioned).
func SetupBucket() jetstream.KeyValueConfig { return setupBucket() }

func setupBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketSetup, Description: "provider setup ledger", Storage: jetstream.FileStorage}
}

// settingsKey pins, in the setup bucket, the settings every node sharing
// one JetStream must agree on.
const settingsKey = "_bus.settings"

// shared are the settings nodes of one service must share: the streams'
// and buckets' configs (the last node to start would rewrite them, while
// every node kept timing its own work by its own values: a 30 s local
// lease_ttl on a 10 s bucket polls 14 s after a successor took the lease)
// and the partition count (a node with fewer partitions deletes consumers
// the others pull from).
type shared struct {
	Partitions       int           `json:"partitions"`
	Replicas         int           `json:"replicas"`
	AckWait          time.Duration `json:"ackWait"`
	MemberTTL        time.Duration `json:"memberTtl"`
	LeaseTTL         time.Duration `json:"leaseTtl"`
	EventsDuplicates time.Duration `json:"eventsDuplicates"`
	InboxDuplicates  time.Duration `json:"inboxDuplicates"`
	InboxMaxAge      time.Duration `json:"inboxMaxAge"`
	ParkedMaxAge     time.Duration `json:"parkedMaxAge"`
}

func sharedOf(c Config) shared {
	return shared{Partitions: c.Partitions, Replicas: c.Replicas, AckWait: c.AckWait, MemberTTL: c.MemberTTL, LeaseTTL: c.LeaseTTL,
		EventsDuplicates: c.EventsDuplicates, InboxDuplicates: c.InboxDuplicates, InboxMaxAge: c.InboxMaxAge, ParkedMaxAge: c.ParkedMaxAge}
}

// diff names each setting of want that differs from have.
func (have shared) diff(want shared) []string {
	var out []string
	add := func(name string, h, w any) {
		if h != w {
			out = append(out, fmt.Sprintf("bus.%s: the service runs with %v, this node is configured with %v", name, h, w))
		}
	}
	add("partitions", have.Partitions, want.Partitions)
	add("replicas", have.Replicas, want.Replicas)
	add("ack_wait", have.AckWait, want.AckWait)
	add("member_ttl", have.MemberTTL, want.MemberTTL)
	add("lease_ttl", have.LeaseTTL, want.LeaseTTL)
	add("events_duplicates", have.EventsDuplicates, want.EventsDuplicates)
	add("inbox_duplicates", have.InboxDuplicates, want.InboxDuplicates)
	add("inbox_max_age", have.InboxMaxAge, want.InboxMaxAge)
	add("parked_max_age", have.ParkedMaxAge, want.ParkedMaxAge)
	return out
}

// agreeSettings pins this node's shared settings in the setup bucket, or
// checks them against the pinned ones, before anything else is
// provisioned (so a refused node rewrites no stream, bucket or consumer).
// A node that may have peers (Cfg.Shared: an embedded cluster, or external
// mode, on one server or several) is refused on any difference with
// ErrSettingsMismatch; a single embedded node (no peer can share its
// JetStream) pins its new settings instead. To change a pinned setting of
// a service with peers: stop every node, delete the key `_bus.settings` of
// the bucket `sentinel_setup`, start the nodes with the new value.
func (b *Bus) agreeSettings(ctx context.Context) error {
	want := sharedOf(b.Cfg)
	raw, _ := json.Marshal(want)
	var have shared
	var rev uint64
	created := false
	err := provision(ctx, func(ctx context.Context) error {
		e, err := b.setup.Get(ctx, settingsKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			if _, err := b.setup.Create(ctx, settingsKey, raw); err == nil {
				created = true
				return nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return err
			}
			e, err = b.setup.Get(ctx, settingsKey) // pinned meanwhile by another node
		}
		if err != nil {
			return err
		}
		rev = e.Revision()
		return json.Unmarshal(e.Value(), &have)
	})
	if err != nil || created {
		if err != nil {
			return fmt.Errorf("bus: pin the shared settings: %w", err)
		}
		return nil
	}
	diffs := have.diff(want)
	if len(diffs) == 0 {
		return nil
	}
	if b.Cfg.Shared {
		return fmt.Errorf("%w: %s (use the same values on every node; to change one, stop every node, delete the key %s of the bucket %s, then start them with the new value)",
			ErrSettingsMismatch, strings.Join(diffs, "; "), settingsKey, BucketSetup)
	}
	return provision(ctx, func(ctx context.Context) error {
		_, err := b.setup.Update(ctx, settingsKey, raw, rev)
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return fmt.Errorf("%w: the pin changed while this node started alone", ErrSettingsMismatch)
		}
		return err
	})
}

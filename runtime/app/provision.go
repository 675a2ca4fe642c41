package app

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/principals"
	"github.com/agentproto/sentinel/runtime/quota"
	"github.com/agentproto/sentinel/runtime/sentinels"
	"github.com/agentproto/sentinel/runtime/sessions"
	"github.com/agentproto/sentinel/runtime/subscriptions"
)

// The one place that lists every stream and bucket a node provisions: each
// feature's package declares its own configs and subjects, bus.Open provisions
// them all at once at start (docs/cluster.md, "Start-up"), and each
// feature's opener then gets its handles from what Open provisioned. The
// cluster view (clusterview.go) reports the same list.

// assets lists the features' streams and buckets for bus config c (the
// replicas resolved).
func (a *App) assets(c bus.Config) ([]bus.Assets, error) {
	mcp, err := subscriptions.AssetsFor(a.Cfg.MCPEvents.Retention)
	if err != nil {
		return nil, err
	}
	jcfg := a.journalConfig()
	return []bus.Assets{
		sentinels.Assets(),
		inbox.Assets(c),
		park.Assets(c),
		sessions.Assets(c),
		follow.Assets(),
		{Buckets: cluster.Buckets(c.MemberTTL, c.LeaseTTL)},
		{Streams: []bus.StreamSpec{journal.Stream(c.Replicas, jcfg.MaxAge, jcfg.MaxBytes)}},
		mcp,
		principals.Assets(),
		{Buckets: []jetstream.KeyValueConfig{deliver.BatchConfig(), quota.BucketConfig()}},
	}, nil
}

// assetNames are the names of every stream and bucket of the node: the
// bus's own (the events stream, the setup and locks buckets) and the
// features'.
func assetNames(list []bus.Assets) (streams, buckets []string) {
	streams = []string{bus.StreamEvents}
	buckets = []string{bus.BucketSetup, bus.BucketLocks}
	for _, as := range list {
		for _, s := range as.Streams {
			streams = append(streams, s.Config.Name)
		}
		for _, b := range as.Buckets {
			buckets = append(buckets, b.Bucket)
		}
	}
	return streams, buckets
}

// clusterBuckets are runtime/cluster's buckets, provisioned.
type clusterBuckets struct {
	Nodes, Leases jetstream.KeyValue
}

// openClusterBuckets gets the nodes and leases buckets (answered from what
// bus.Open provisioned).
func openClusterBuckets(ctx context.Context, b *bus.Bus) (clusterBuckets, error) {
	var cb clusterBuckets
	var err error
	if cb.Nodes, err = b.EnsureKeyValue(ctx, cluster.NodesBucket(b.Cfg.MemberTTL)); err != nil {
		return cb, err
	}
	if cb.Leases, err = b.EnsureKeyValue(ctx, cluster.LeasesBucket(b.Cfg.LeaseTTL)); err != nil {
		return cb, err
	}
	return cb, nil
}

package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentproto/sentinel/tools/bench"
)

// Target is the cluster under test: its nodes' API URLs (what a load
// balancer in front of them would hold), the service's token, and the
// faults the nemesis may inject on node i (0-based).
type Target interface {
	// Name says what the target is ("local", "compose <project>").
	Name() string
	Names() []string
	URLs() []string
	Token() string
	// FeedPath is the fake provider's feed file the nodes poll ("": the
	// poll workload is off).
	FeedPath() string
	// Kinds are the fault kinds the target can inject.
	Kinds() []Kind
	Kill(ctx context.Context, i int) error
	Start(ctx context.Context, i int) error
	Stop(ctx context.Context, i int) error
	Pause(ctx context.Context, i int) error
	Resume(ctx context.Context, i int) error
	Cut(ctx context.Context, i int) error
	Reconnect(ctx context.Context, i int) error
	// WaitHealthy waits, bounded by ctx, until every node is ready.
	WaitHealthy(ctx context.Context) error
	// Logs is the tail of the nodes' logs, for a failed run.
	Logs() string
	Close()
}

// errNotSupported is a fault the target cannot inject.
var errNotSupported = errors.New("this fault needs --compose")

// LocalOptions configure the local target.
type LocalOptions struct {
	// Binary is the sentinel executable (os.Executable()).
	Binary string
	// Dir is where the temporary homes go (default the system temp dir).
	Dir string
	// Nodes is the node count (3).
	Nodes int
	// AckWait, MemberTTL, LeaseTTL and PollInterval are the nodes'
	// bus.ack_wait, bus.member_ttl, bus.lease_ttl and poll intervals:
	// shorter than the defaults, so that faults heal within a short run.
	AckWait, MemberTTL, LeaseTTL, PollInterval time.Duration
}

// localTarget is Nodes `sentinel serve` processes started by the run in a
// temporary root, removed at Close.
type localTarget struct {
	root string
	feed string
	c    *bench.LocalCluster
}

// StartLocal starts the local target: o.Nodes clustered processes of
// o.Binary on free loopback ports, the fake provider polling a feed file
// in the root.
func StartLocal(ctx context.Context, o LocalOptions) (Target, error) {
	root, err := os.MkdirTemp(o.Dir, "sentinel-chaos-")
	if err != nil {
		return nil, fmt.Errorf("make the chaos root: %w", err)
	}
	feed := filepath.Join(root, "feed.jsonl")
	env := []string{
		"AGENTPROTO_TESTING_FAKE_FEED=" + feed,
		"AGENTPROTO_BUS_ACK_WAIT=" + o.AckWait.String(),
		"AGENTPROTO_BUS_MEMBER_TTL=" + o.MemberTTL.String(),
		"AGENTPROTO_BUS_LEASE_TTL=" + o.LeaseTTL.String(),
		"AGENTPROTO_POLL_ACTIVE_INTERVAL=" + o.PollInterval.String(),
		"AGENTPROTO_POLL_IDLE_INTERVAL=" + o.PollInterval.String(),
	}
	c, err := bench.StartLocalCluster(ctx, root, o.Binary, "chaos", o.Nodes, env...)
	if err != nil {
		_ = os.RemoveAll(root)
		return nil, err
	}
	return &localTarget{root: root, feed: feed, c: c}, nil
}

func (l *localTarget) Name() string     { return "local" }
func (l *localTarget) Names() []string  { return l.c.Names() }
func (l *localTarget) URLs() []string   { return l.c.URLs() }
func (l *localTarget) Token() string    { return l.c.Token() }
func (l *localTarget) FeedPath() string { return l.feed }
func (l *localTarget) Kinds() []Kind    { return LocalKinds }
func (l *localTarget) Logs() string     { return l.c.Logs() }

func (l *localTarget) Kill(_ context.Context, i int) error { l.c.Kill(i); return nil }
func (l *localTarget) Start(ctx context.Context, i int) error {
	return l.c.Start(ctx, i)
}
func (l *localTarget) Stop(ctx context.Context, i int) error { return l.c.Stop(ctx, i) }
func (l *localTarget) Pause(_ context.Context, i int) error {
	return l.c.Signal(i, syscall.SIGSTOP)
}
func (l *localTarget) Resume(_ context.Context, i int) error {
	return l.c.Signal(i, syscall.SIGCONT)
}
func (l *localTarget) Cut(context.Context, int) error       { return errNotSupported }
func (l *localTarget) Reconnect(context.Context, int) error { return errNotSupported }
func (l *localTarget) WaitHealthy(ctx context.Context) error {
	return l.c.WaitHealthy(ctx)
}

// Close SIGKILLs the nodes (their homes are removed next: nothing of them
// is kept, so a graceful stop would only cost time) and removes the root.
func (l *localTarget) Close() {
	for i := range l.c.Names() {
		l.c.Kill(i)
	}
	l.c.Close()
	_ = os.RemoveAll(l.root)
}

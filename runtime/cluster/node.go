package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoQuorum is the reason a node cut off from its cluster gives: its
// heartbeat could not be stored.
var ErrNoQuorum = errors.New("cluster unavailable: this node cannot store writes (no JetStream quorum reachable)")

// Job names of the periodic work that runs once per cluster.
const (
	JobExpiry        = "expiry"
	JobReconcile     = "reconcile"
	JobTombstones    = "tombstones"
	JobFollowDigests = "follow-digests"
)

// Jobs lists every periodic job.
var Jobs = []string{JobExpiry, JobReconcile, JobTombstones, JobFollowDigests}

// Config tunes the node's heartbeat and leases.
type Config struct {
	// Heartbeat is how often the node beats and reviews its leases.
	Heartbeat time.Duration
	// MemberTTL and LeaseTTL are the buckets' key ages (bus.Config).
	MemberTTL, LeaseTTL time.Duration
	// PollPartitions is the number of poll leases (sentinels hash onto
	// them by the repository or subject they watch).
	PollPartitions int
}

// DefaultConfig returns the defaults for the bus's TTLs.
func DefaultConfig(memberTTL, leaseTTL time.Duration) Config {
	return Config{Heartbeat: time.Second, MemberTTL: memberTTL, LeaseTTL: leaseTTL, PollPartitions: 32}
}

// Member is one live node as its heartbeat describes it.
type Member struct {
	Name      string    `json:"name"`
	APIURL    string    `json:"apiUrl,omitempty"`
	ClientURL string    `json:"clientUrl,omitempty"`
	StartedAt time.Time `json:"startedAt"`
	BeatAt    time.Time `json:"beatAt"`
	// Adapters are the third-party adapters this node discovered and their
	// state (GET /cluster shows, beside each member, the adapters another
	// member has and it lacks as unavailable).
	Adapters []AdapterState `json:"adapters,omitempty"`
}

// AdapterState is one discovered adapter of a node: Status running,
// idle (not started yet) or unavailable (Reason says why).
type AdapterState struct {
	Slug   string `json:"slug"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

type lease struct {
	rev    uint64
	sentAt time.Time
}

type leaseValue struct {
	Owner string    `json:"owner"`
	Since time.Time `json:"since"`
}

// Node is this node's view of the cluster. Run keeps it current; every
// other method is safe for concurrent use.
type Node struct {
	name   string
	self   Member
	nodes  jetstream.KeyValue
	leases jetstream.KeyValue
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	// adapters, when set, reports this node's adapters for its heartbeat
	// (cheap: it must not start or call one).
	adapters func() []AdapterState
	// after returns a channel that fires after d (tests inject a clock).
	after func(d time.Duration) <-chan time.Time
	// inMajority, when set (an embedded cluster), reports whether this
	// node's server reaches a quorum of its peers: while it does, a
	// heartbeat that cannot be stored means an election (its bucket's
	// leader died), not a partition, and the node stays writable for up to
	// ElectionGrace.
	inMajority func() bool
	// onAcquire, when set, hears of each lease this node newly takes (a
	// poll partition a dead node held, say), on the membership goroutine:
	// it must not block.
	onAcquire func(item string)

	mu       sync.Mutex
	members  []string
	beatOK   time.Time
	beatSent time.Time
	lastErr  error
	held     map[string]lease
	since    map[string]time.Time
	wake     chan struct{}
}

// Option sets one of a node's optional settings.
type Option func(*Node)

// WithLogger logs failed rounds to l (default: discard).
func WithLogger(l *slog.Logger) Option { return func(n *Node) { n.log = l } }

// WithClock reads the time from now (default time.Now).
func WithClock(now func() time.Time) Option { return func(n *Node) { n.now = now } }

// WithAfter waits with after between rounds (default time.After; tests
// inject a clock).
func WithAfter(after func(d time.Duration) <-chan time.Time) Option {
	return func(n *Node) { n.after = after }
}

// WithAdapters reports this node's adapters in its heartbeat (cheap: it
// must not start or call one).
func WithAdapters(adapters func() []AdapterState) Option {
	return func(n *Node) { n.adapters = adapters }
}

// WithInMajority tells whether this node's server reaches a quorum of its
// peers (an embedded cluster): while it does, a heartbeat that cannot be
// stored means an election, not a partition, and the node stays writable
// for up to ElectionGrace.
func WithInMajority(in func() bool) Option { return func(n *Node) { n.inMajority = in } }

// WithOnAcquire hears of each lease this node newly takes, on the
// membership goroutine: it must not block.
func WithOnAcquire(fn func(item string)) Option { return func(n *Node) { n.onAcquire = fn } }

// WithURLs are the node's API and NATS client URLs its heartbeat
// announces ("" leaves one out).
func WithURLs(api, client string) Option {
	return func(n *Node) { n.self.APIURL, n.self.ClientURL = api, client }
}

// New returns the node name over the nodes and leases buckets
// (NodesBucket, LeasesBucket), beating and leasing as cfg says
// (DefaultConfig of the buckets' TTLs), with opts applied.
func New(name string, nodes, leases jetstream.KeyValue, cfg Config, opts ...Option) *Node {
	n := &Node{name: name, nodes: nodes, leases: leases, cfg: cfg}
	for _, o := range opts {
		o(n)
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if n.now == nil {
		n.now = time.Now
	}
	if n.after == nil {
		n.after = time.After
	}
	return n
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Config is the node's heartbeat and leases.
func (n *Node) Config() Config { return n.cfg }

// PollItem is the lease name of a poll partition.
func PollItem(p int) string { return "poll." + strconv.Itoa(p) }

// JobItem is the lease name of a periodic job.
func JobItem(job string) string { return "job." + job }

// PollPartition maps a poll key (the repository or subject a sentinel
// watches) to its poll partition.
func PollPartition(key string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// Items lists every leased work item.
func (n *Node) Items() []string { return ItemsOf(n.cfg.PollPartitions) }

// Run beats and keeps leases until ctx ends, then releases what it holds
// (so a clean stop hands work over at once, not after LeaseTTL).
func (n *Node) Run(ctx context.Context) {
	n.mu.Lock()
	if n.held == nil {
		n.held = map[string]lease{}
		n.since = map[string]time.Time{}
	}
	if n.wake == nil {
		n.wake = make(chan struct{}, 1)
	}
	n.mu.Unlock()
	n.self.Name = n.name
	if n.self.StartedAt.IsZero() {
		n.self.StartedAt = n.now().UTC()
	}
	for {
		n.Round(ctx)
		select {
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			n.releaseAll(rctx)
			cancel()
			return
		case <-n.after(n.cfg.Heartbeat):
		case <-n.wake:
		}
	}
}

// Round runs one heartbeat: beat, read the members, review every lease.
func (n *Node) Round(ctx context.Context) {
	n.mu.Lock()
	if n.held == nil {
		n.held = map[string]lease{}
		n.since = map[string]time.Time{}
	}
	n.mu.Unlock()
	if err := n.beat(ctx); err != nil {
		n.setErr(err)
		return
	}
	members, err := n.readMembers(ctx)
	if err != nil {
		n.setErr(err)
		return
	}
	n.mu.Lock()
	n.members = members
	n.mu.Unlock()
	for _, item := range n.Items() {
		n.review(ctx, item, members)
	}
}

func (n *Node) beat(ctx context.Context) error {
	sent := n.now()
	n.self.BeatAt = sent.UTC()
	if n.adapters != nil {
		n.self.Adapters = n.adapters()
	}
	raw, _ := json.Marshal(n.self)
	bctx, cancel := context.WithTimeout(ctx, n.cfg.Heartbeat+time.Second)
	defer cancel()
	if _, err := n.nodes.Put(bctx, "node."+n.name, raw); err != nil {
		return fmt.Errorf("cluster: heartbeat: %w", err)
	}
	n.mu.Lock()
	n.beatOK, n.beatSent, n.lastErr = n.now(), sent, nil
	n.mu.Unlock()
	return nil
}

func (n *Node) setErr(err error) {
	n.mu.Lock()
	n.lastErr = err
	n.mu.Unlock()
	n.log.Debug("cluster round failed", "err", err)
}

func (n *Node) readMembers(ctx context.Context) ([]string, error) {
	lctx, cancel := context.WithTimeout(ctx, n.cfg.Heartbeat+time.Second)
	defer cancel()
	lister, err := n.nodes.ListKeys(lctx)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return []string{n.name}, nil
		}
		return nil, fmt.Errorf("cluster: list members: %w", err)
	}
	defer func() { _ = lister.Stop() }()
	var out []string
	for k := range lister.Keys() {
		if len(k) > 5 && k[:5] == "node." {
			out = append(out, k[5:])
		}
	}
	if !slices.Contains(out, n.name) {
		out = append(out, n.name)
	}
	sort.Strings(out)
	return out, nil
}

// Preferred is the member that should own item: the highest rendezvous
// score among members.
func Preferred(item string, members []string) string {
	best, bestScore := "", uint64(0)
	for _, m := range members {
		h := fnv.New64a()
		_, _ = h.Write([]byte(item))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(m))
		if s := mix64(h.Sum64()); best == "" || s > bestScore {
			best, bestScore = m, s
		}
	}
	return best
}

// mix64 is murmur3's finalizer: FNV alone barely changes its high bits
// for names that differ in their last byte, which skews rendezvous scores.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// review acquires, renews or releases one lease.
func (n *Node) review(ctx context.Context, item string, members []string) {
	want := Preferred(item, members) == n.name
	n.mu.Lock()
	l, held := n.held[item]
	n.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, n.cfg.Heartbeat+time.Second)
	defer cancel()
	key := item
	switch {
	case held && !want:
		// Hand over to the preferred member (a node joined).
		_ = n.leases.Delete(rctx, key, jetstream.LastRevision(l.rev))
		n.drop(item)
	case held:
		if n.now().Sub(l.sentAt) < n.cfg.LeaseTTL/3 {
			return
		}
		sent := n.now()
		raw, _ := json.Marshal(leaseValue{Owner: n.name, Since: n.sinceOf(item)})
		rev, err := n.leases.Update(rctx, key, raw, l.rev)
		if err != nil {
			if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) ||
				errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
				n.drop(item) // lost: it lapsed, or someone else holds it now
			}
			return // a timeout keeps the lease until it lapses locally
		}
		n.keep(item, rev, sent)
	case want:
		sent := n.now()
		raw, _ := json.Marshal(leaseValue{Owner: n.name, Since: sent.UTC()})
		rev, err := n.leases.Create(rctx, key, raw)
		if err != nil {
			return // held by another (it lapses in LeaseTTL) or cut off
		}
		n.mu.Lock()
		n.since[item] = sent.UTC()
		n.mu.Unlock()
		n.keep(item, rev, sent)
		if n.onAcquire != nil {
			n.onAcquire(item)
		}
	}
}

func (n *Node) sinceOf(item string) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.since[item]
}

func (n *Node) keep(item string, rev uint64, sent time.Time) {
	n.mu.Lock()
	n.held[item] = lease{rev: rev, sentAt: sent}
	n.mu.Unlock()
}

func (n *Node) drop(item string) {
	n.mu.Lock()
	delete(n.held, item)
	delete(n.since, item)
	n.mu.Unlock()
}

func (n *Node) releaseAll(ctx context.Context) {
	n.mu.Lock()
	held := n.held
	n.held = map[string]lease{}
	n.mu.Unlock()
	for item, l := range held {
		_ = n.leases.Delete(ctx, item, jetstream.LastRevision(l.rev))
	}
	_ = n.nodes.Delete(ctx, "node."+n.name)
}

// margin is how long before its server-side expiry a lease stops counting
// locally (clock rates, request latency).
func (n *Node) margin() time.Duration { return n.cfg.LeaseTTL / 5 }

// Owns reports whether this node holds a valid lease on item and can
// write.
func (n *Node) Owns(item string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.held[item]
	if !ok {
		return false
	}
	return Elapsed(l.sentAt, n.now()) < n.cfg.LeaseTTL-n.margin() && n.writableLocked() == nil
}

// Elapsed is the time from then to now by the monotonic clock or by the
// wall clock, whichever says more: Go's monotonic clock stops while a VM
// is suspended, so a node resumed after a suspend would count a lease (or a
// delivery) as younger than it is; the wall clock, set right again on
// resume, does not (issue 21, item 11). A wall clock stepped backwards only
// shortens what it says, and the monotonic reading then wins.
func Elapsed(then, now time.Time) time.Duration {
	return max(now.Sub(then), now.Round(0).Sub(then.Round(0)))
}

// OwnsJob reports whether this node runs the periodic job now.
func (n *Node) OwnsJob(job string) bool { return n.Owns(JobItem(job)) }

// OwnsPoll reports whether this node polls the sentinels of poll key.
func (n *Node) OwnsPoll(key string) bool {
	return n.Owns(PollItem(PollPartition(key, n.cfg.PollPartitions)))
}

// LiveMembers returns the member names the last round read.
func (n *Node) LiveMembers() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.members...)
}

// Held returns the items this node holds a valid lease on.
func (n *Node) Held() []string {
	n.mu.Lock()
	items := make([]string, 0, len(n.held))
	for item := range n.held {
		items = append(items, item)
	}
	n.mu.Unlock()
	var out []string
	for _, item := range items {
		if n.Owns(item) {
			out = append(out, item)
		}
	}
	sort.Strings(out)
	return out
}

// Kick runs a round now (a node joined or a test wants progress).
func (n *Node) Kick() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

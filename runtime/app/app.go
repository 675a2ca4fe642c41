package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/httpapi"
	"github.com/agentproto/sentinel/ingress/inbound"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/principals"
	"github.com/agentproto/sentinel/runtime/sentinels"
	"github.com/agentproto/sentinel/runtime/sessions"
	"github.com/agentproto/sentinel/runtime/storage"
	"github.com/agentproto/sentinel/runtime/subscriptions"
)

// App is one node.
type App struct {
	Cfg   Config
	Log   *slog.Logger
	Token string

	Bus       *bus.Bus
	Registry  *providers.Registry
	Sentinels *sentinels.Service
	Inbox     *inbox.Inbox
	Park      *park.Store
	Loop      *poll.Loop
	// quota feeds GitHub rate samples to the quota governor (quota.go).
	quota   quotaSink
	Workers *deliver.Workers
	// batches holds the events of sentinels with a batchMs (digests).
	batches *deliver.Batches
	Metrics *metrics.Metrics
	// Cluster is this node's view of the cluster (nil for a single node).
	Cluster *cluster.Node
	// MCPEvents serves MCP Events subscriptions (events.go; the service of
	// runtime/subscriptions, not the events stream of bus).
	MCPEvents *subscriptions.Service
	// Journal is the decision journal (journal.go).
	Journal *journal.Journal

	now       func() time.Time
	startedAt time.Time
	boot      bootState
	nats      *embedded.Server
	nc        *bus.Conn
	servers   int
	storage   *storage.Guard
	ln        net.Listener
	gate      *ingress.Gate
	handler   http.Handler
	server    *ingress.Server
	teardown  []step
	started   atomic.Bool
	stopped   atomic.Bool
	runCancel context.CancelFunc
	wg        sync.WaitGroup

	subsystems []subsystem
	// streams caps the node's long-held requests, shared by every surface
	// (inbox streams and long-polls, MCP inbox_wait, MCP Events streams).
	streams *httpapi.StreamLimiter
	// principals are the named tokens (tokens.go).
	principals *principals.Store
	// buckets are the sentinels' buckets, opened after the bus.
	buckets *sentinels.Buckets
	// clusterKV are the nodes and leases buckets (runtime/cluster).
	clusterKV clusterBuckets
	// assetList is every feature's streams and buckets (provision.go).
	assetList []bus.Assets
	// pause holds the node's named pause points (WithPause; nil in
	// production).
	pause *pause.Points
	// githubHTTP carries the node's in-process GitHub calls
	// (WithGitHubHTTP; nil in production: the default client).
	githubHTTP *http.Client
}

// Option adjusts a node built by New.
type Option func(*App)

// WithPause holds the node's components at their named pause points
// (tests script an order with them; today the MCP Events service's).
func WithPause(p *pause.Points) Option { return func(a *App) { a.pause = p } }

// WithGitHubHTTP sends every in-process GitHub call of the node (the
// token's, the App's and its installations') through c (tests: the fake
// GitHub's client).
func WithGitHubHTTP(c *http.Client) Option { return func(a *App) { a.githubHTTP = c } }

type step struct {
	name string
	fn   func(ctx context.Context) error
}

func (a *App) push(name string, fn func(ctx context.Context) error) {
	a.teardown = append(a.teardown, step{name, fn})
}

// New prepares a node without waiting for anything: it locks the home,
// binds the API listener and serves it at once (/healthz 200, /readyz 503
// and every other route 503 not_ready until Start opens the node: see
// ingress.Gate), writes daemon.json, and starts the embedded server (or
// dials the external deployment). Start waits for JetStream and does the
// rest. On failure everything built so far is torn down.
func New(cfg Config, log *slog.Logger, opts ...Option) (_ *App, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := &App{Cfg: cfg, Log: log, now: time.Now}
	for _, o := range opts {
		o(a)
	}
	a.warnInsecure() // transport.go
	a.boot.since = a.now()
	if !cfg.Cluster.Clustered() && !cfg.NATS.External() {
		a.boot.phase = phaseStarting // a single node waits for no one
	}
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			_ = a.runTeardown(ctx)
		}
	}()
	if err := prepareHome(cfg.Home); err != nil {
		return nil, err
	}
	lock, err := lockHome(cfg.Home)
	if err != nil {
		return nil, err
	}
	a.push("home lock", func(context.Context) error { return lock.Close() })
	if a.Token, err = loadOrCreateToken(cfg.Home, cfg.Token); err != nil {
		return nil, err
	}
	if err = a.listen(); err != nil { // transport.go: TLS with tls_cert
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%w (is another sentinel node running? stop it, or pass --listen with another port; port 0 picks a free one)", err)
		}
		return nil, err
	}
	a.push("listener", func(context.Context) error { _ = a.ln.Close(); return nil })
	if a.nc, a.servers, err = a.connectBus(cfg, log); err != nil {
		return nil, err
	}
	a.gate = ingress.NewGate(a, log.With("component", "http"))
	a.server = ingress.Serve(a.ln, a.gate, a.Log)
	a.push("http server (boot)", a.server.Shutdown)
	if err := writeDaemonInfo(a.Cfg.Home, DaemonInfo{URL: a.URL(), PID: os.Getpid(), TLSCert: absPath(a.Cfg.TLSCert)}); err != nil {
		return nil, err
	}
	a.push("daemon.json", func(context.Context) error {
		return os.Remove(filepath.Join(a.Cfg.Home, DaemonFile))
	})
	return a, nil
}

// open provisions the bus and builds the runtime and the full HTTP
// handler, once JetStream answers (Start).
func (a *App) open(ctx context.Context) error {
	cfg := a.Cfg
	provisionFor := time.Minute
	if cfg.Cluster.Clustered() || cfg.NATS.External() {
		provisionFor = max(provisionFor, cfg.Cluster.Wait)
	}
	pctx, cancel := context.WithTimeout(ctx, provisionFor)
	defer cancel()
	bcfg := cfg.Bus
	bcfg.Replicas = cfg.Replicas(a.servers)
	// Nodes that may have peers agree on the shared settings (bus/settings.go).
	bcfg.Shared = cfg.Cluster.Clustered() || cfg.NATS.External()
	if bcfg.Replicas == 0 {
		bcfg.Replicas = 1
	}
	// Every stream and bucket features own, provisioned with the bus's own
	// at once (provision.go).
	assets, err := a.assets(bcfg)
	if err != nil {
		return err
	}
	if a.Bus, err = bus.Open(pctx, a.nc, bcfg, assets...); err != nil {
		return err
	}
	a.assetList = assets
	if a.clusterKV, err = openClusterBuckets(pctx, a.Bus); err != nil {
		return err
	}
	if a.buckets, err = sentinels.OpenBuckets(pctx, a.Bus); err != nil {
		return err
	}
	a.Metrics = metrics.New()
	if cfg.Cluster.Clustered() || cfg.NATS.External() {
		a.Cluster = a.newClusterNode(cfg)
	}

	provs, err := buildProviders(cfg, providerDeps{
		log: a.Log, now: a.now, githubHTTP: a.githubHTTP,
		hooks:     bus.NewKV(a.buckets.Hooks),
		locker:    a.Bus.NewLocker(cfg.Node.Name),
		creds:     sentinels.NewCredStore(a.buckets.Creds),
		publicURL: a.publicURL,
		observe:   a.quota.observe,
		hold:      a.quota.hold,
	})
	if err != nil {
		return fmt.Errorf("build providers: %w", err)
	}
	if a.Registry, err = providers.NewRegistry(provs...); err != nil {
		return err
	}
	a.push("adapter processes", a.stopAdapters)
	return a.wire(pctx)
}

// NATSClientURL is the embedded server's client listener URL, or "" when
// it opens none (nats.listen empty).
func (a *App) NATSClientURL() string {
	if a.nats == nil || a.Cfg.NATS.Listen == "" {
		return ""
	}
	return a.nats.ClientURL()
}

func (a *App) publicURL() providers.PublicURL {
	if a.Cfg.PublicURL == "" {
		return providers.PublicURL{}
	}
	return providers.PublicURL{URL: a.Cfg.PublicURL, Stable: true, Source: "env"}
}

// wire builds the runtime components and the HTTP handler.
func (a *App) wire(ctx context.Context) error {
	b, log, now := a.Bus, a.Log, a.now
	a.storage = a.newStorageGuard()
	bk := a.buckets
	var sopts []sentinels.StoreOption
	if a.Cluster != nil {
		sopts = append(sopts, sentinels.WithLeaderGet(sentinels.BusLeaderGet(b)))
	}
	store := sentinels.NewStore(bk.Records, sopts...)
	if err := store.StartCache(ctx); err != nil {
		return fmt.Errorf("load sentinel records: %w", err)
	}
	a.push("sentinel record cache", func(context.Context) error { store.StopCache(); return nil })
	seen := sentinels.NewSeen(bk.Seen, sentinels.WithSeenClock(now))
	var err error
	if a.Inbox, err = inbox.Open(ctx, b, b.Cfg, inbox.WithMetrics(a.Metrics)); err != nil {
		return err
	}
	if a.Park, err = park.Open(ctx, b, b.Cfg, park.WithClock(now)); err != nil {
		return err
	}
	expirer := sentinels.NewExpirer(store, a.Registry, sentinels.WithExpirerLogger(log), sentinels.WithExpirerClock(now),
		sentinels.WithTombstones(sentinels.NewTombstones(bk.Tombstones, sentinels.WithTombstonesClock(now), sentinels.WithTombstonesLogger(log.With("component", "tombstones")))))
	publisher := poll.NewPublisher(b, a.Metrics)
	if err := a.openQuota(ctx); err != nil {
		return err
	}
	loopOpts := []poll.Option{poll.WithConfig(a.Cfg.Poll), poll.WithMetrics(a.Metrics), poll.WithLogger(log.With("component", "poll")),
		poll.WithClock(now), poll.WithBudget(a.quota.g.Load())}
	if a.Cluster != nil {
		loopOpts = append(loopOpts, poll.WithOwnership(a.Cluster))
	}
	if a.Loop, err = poll.New(store, a.Registry, publisher, a.Park, expirer, loopOpts...); err != nil {
		return fmt.Errorf("poll loop: %w", err)
	}
	var poller interface{ PollNow(context.Context) } = a.Loop
	if a.Cluster != nil {
		poller = clusterPoller{a}
	}
	index, err := sentinels.OpenWatchIndex(ctx, b)
	if err != nil {
		return err
	}
	// The session registry comes before the sentinel service, which asks
	// it whether a sentinel's session has ended.
	sst, err := a.openSessions(ctx) // sessions.go
	if err != nil {
		return err
	}
	svcOpts := []sentinels.Option{sentinels.WithLogger(log.With("component", "sentinels")), sentinels.WithClock(now),
		sentinels.WithPublicURL(a.publicURL), sentinels.WithSelectionOrder(a.Cfg.SelectionOrder), sentinels.WithSessions(sessions.NewChecker(sst.registry)),
		sentinels.WithPoller(poller), sentinels.WithIndex(index), sentinels.WithActiveInterval(a.Cfg.Poll.ActiveInterval), sentinels.WithQuota(a.quotaFor)}
	if a.Sentinels, err = sentinels.NewService(sentinels.ServiceDeps{Store: store, Seen: seen, Registry: a.Registry, Expirer: expirer,
		Creds: sentinels.NewCredStore(bk.Creds), Ledger: sentinels.NewLedger(bk.Setup), Publisher: publisher}, svcOpts...); err != nil {
		return fmt.Errorf("sentinel service: %w", err)
	}
	if err := a.openMCPEvents(ctx); err != nil {
		return err
	}
	if err := a.openPrincipals(ctx); err != nil { // tokens.go
		return err
	}
	a.streams = httpapi.NewStreamLimiter(a.Cfg.MaxStreams, a.Cfg.MaxStreamsPerSession)
	// Sessions first: the delivery path routes through them and the MCP
	// surface takes their services as they are.
	sess, err := a.wireSessions(sst)
	if err != nil {
		return err
	}
	// The delivery path before the surfaces: MCP's explainer and dry runs
	// are handed the journal and the pipeline as built.
	var router deliver.Router = deliver.NewDirectRouter(a.Inbox, deliver.WithDirectRouterClock(now))
	appendDigest := inbox.AppendFunc(a.Inbox.Append)
	if sess.Router != nil {
		router = sess.Router
	}
	if sess.Append != nil {
		appendDigest = sess.Append
	}
	router = subscriptions.NewRouter(router, a.MCPEvents.Feed())
	if err := a.openJournal(ctx); err != nil {
		return err
	}
	batches, err := deliver.OpenBatches(ctx, b, appendDigest, deliver.WithBatchesClock(now), deliver.WithBatchesLogger(log.With("component", "digests")))
	if err != nil {
		return err
	}
	a.batches = batches
	pipeline, err := deliver.NewPipeline(deliver.PipelineDeps{Store: store, Seen: seen, Registry: a.Registry, Router: router, Park: a.Park, Expirer: expirer},
		deliver.WithMetrics(a.Metrics), deliver.WithLogger(log.With("component", "deliver")), deliver.WithClock(now), deliver.WithDecisions(a.Journal), deliver.WithBatches(batches))
	if err != nil {
		return fmt.Errorf("wire delivery: %w", err)
	}
	if a.Workers, err = deliver.NewWorkers(b, pipeline, deliver.WithConfig(a.Cfg.Delivery)); err != nil {
		return fmt.Errorf("wire delivery: %w", err)
	}
	a.subsystems = []subsystem{sess, a.wireMCP(sess.sessions), a.wireMCPEvents()}
	routes := ingress.Routes{
		Public: []ingress.Mounter{},
		API:    []ingress.Mounter{},
		Raw: []ingress.Mounter{func(r chi.Router) {
			r.Method(http.MethodGet, "/metrics", readers("read the node's metrics", a.Metrics.Handler(a.refreshGauges)))
		}},
	}
	for _, s := range a.subsystems {
		routes.API = append(routes.API, s.API...)
		routes.Raw = append(routes.Raw, s.Raw...)
	}
	routes.API = append(routes.API, func(r chi.Router) { httpapi.ExplainerRoutes(r, a.explainerAPI()) })

	sapi := a.sentinelsAPI() // dryrun.go
	in := inbound.New(inboundAPI{svc: a.Sentinels, full: a.storage.Trip}, inbound.WithMaxBody(a.Cfg.MaxInboundBytes), inbound.WithMaxInFlight(a.Cfg.MaxInboundBytesInFlight),
		inbound.WithObserve(func(status int) { a.Metrics.InboundRequests.WithLabelValues(fmt.Sprint(status)).Inc() }),
		inbound.WithStep(a.Metrics.ObserveStep), inbound.WithWritable(a.Writable))
	routes.Public = append(routes.Public, in.Mount)
	routes.API = append(routes.API, func(r chi.Router) { httpapi.SentinelRoutes(r, sapi) })
	routes.API = append(routes.API, func(r chi.Router) { httpapi.ClusterRoutes(r, scopedCluster{clusterAPI{a}}) })
	routes.API = append(routes.API, func(r chi.Router) { httpapi.TokenRoutes(r, tokensAPI{a.principals}) })
	dashboard, err := a.wireUI(sapi) // ui.go
	if err != nil {
		return err
	}
	routes.UI = append(routes.UI, dashboard)
	hosts, err := ingress.NewHostPolicy(a.Cfg.AllowedHosts, a.Cfg.PublicURL)
	if err != nil {
		return err
	}
	a.handler = ingress.NewHandler(ingress.Config{Token: a.Token, Principals: a.principals, MaxBodyBytes: a.Cfg.MaxBodyBytes,
		BodyReadTimeout: a.Cfg.BodyReadTimeout, Hosts: hosts}, a, routes, log.With("component", "http"))
	return nil
}

// autoWatchPRs reads sentinel.auto_watch_prs fresh (through Cfg.Reload,
// so an edit of config.yaml takes effect on the next recorded PR without a
// restart); a reload failure keeps the value the node started with.
func (a *App) autoWatchPRs() bool {
	if a.Cfg.Reload != nil {
		cfg, err := a.Cfg.Reload()
		if err == nil {
			return cfg.Sentinel.AutoWatchPRs
		}
		a.Log.Warn("re-reading the configuration failed; keeping sentinel.auto_watch_prs as started", "err", err)
	}
	return a.Cfg.Sentinel.AutoWatchPRs
}

// Handler returns the node's HTTP handler (for in-process tests): the
// gate, which serves the full handler once Start opened the node.
func (a *App) Handler() http.Handler { return a.gate }

// URL returns the API base URL. A listener on every address (0.0.0.0,
// [::]: in a container) is named by its loopback address, which clients
// on the machine (daemon.json, `docker exec ... sentinel list`) can reach
// and the Host check accepts.
func (a *App) URL() string {
	addr := a.ln.Addr().String()
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
	}
	return a.scheme() + "://" + addr
}

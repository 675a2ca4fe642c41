package principals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// Bounds of the lookups of names the mirror does not hold.
const (
	// missTTL is how long a name found in no record is answered unknown
	// from memory (a token spray costs the bucket one read per name and
	// this long).
	missTTL = 2 * time.Second
	// missNames bounds the remembered unknown names.
	missNames = 4096
	// lookupTimeout bounds the bucket read of a name the mirror does not
	// hold (a token created on another node a moment ago).
	lookupTimeout = 2 * time.Second
)

// Store is the named tokens: the bucket, and a mirror of it kept by a
// watcher, so authentication answers from memory (runtime/app hands it to
// the HTTP layer as its api.Authenticator).
type Store struct {
	kv  jetstream.KeyValue
	bus Bus
	log *slog.Logger
	now func() time.Time

	mu     sync.RWMutex
	recs   map[string]Record // by name
	misses map[string]time.Time

	cancel context.CancelFunc
	done   chan struct{}
}

// Bus is what the store needs of the bus (*bus.Bus is one): its bucket
// provisioned, and reads through the bucket's leader.
type Bus interface {
	EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error)
	LeaderLast(ctx context.Context, stream, subject string) ([]byte, uint64, error)
}

// Assets are the bucket, for bus.Open.
func Assets() bus.Assets { return bus.Assets{Buckets: []jetstream.KeyValueConfig{BucketConfig()}} }

// Option sets one of a store's optional settings.
type Option func(*Store)

// WithLogger logs to l (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock reads the time from now (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open provisions the bucket (idempotent; answered without a request when
// bus.Open provisioned it) and starts the mirror; it returns once the
// mirror holds the bucket's records. Stop it with Stop.
func Open(ctx context.Context, b Bus, opts ...Option) (*Store, error) {
	kv, err := b.EnsureKeyValue(ctx, BucketConfig())
	if err != nil {
		return nil, err
	}
	s := &Store{kv: kv, bus: b, recs: map[string]Record{}, misses: map[string]time.Time{}, done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, err := kv.WatchAll(wctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s: %w", Bucket, err)
	}
	s.cancel = cancel
	ready := make(chan struct{})
	go s.watch(w, ready)
	select {
	case <-ready:
	case <-ctx.Done():
		s.Stop()
		return nil, fmt.Errorf("load %s: %w", Bucket, context.Cause(ctx))
	}
	return s, nil
}

// watch applies the bucket's updates to the mirror until Stop; ready is
// closed once the initial values are in.
func (s *Store) watch(w jetstream.KeyWatcher, ready chan struct{}) {
	defer close(s.done)
	defer func() { _ = w.Stop() }()
	once := sync.OnceFunc(func() { close(ready) })
	for e := range w.Updates() {
		if e == nil {
			once()
			continue
		}
		s.apply(e)
	}
	once()
}

// apply records one bucket entry in the mirror.
func (s *Store) apply(e jetstream.KeyValueEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		delete(s.recs, e.Key())
		return
	}
	var r Record
	if err := json.Unmarshal(e.Value(), &r); err != nil || r.Name != e.Key() {
		s.log.Warn("ignoring a corrupt named-token record", "name", e.Key())
		delete(s.recs, e.Key())
		return
	}
	s.recs[r.Name] = r
	delete(s.misses, r.Name)
}

// Stop ends the mirror's watcher and waits for it. It is idempotent.
func (s *Store) Stop() {
	if s == nil || s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
}

// Authenticate resolves a named token: its shape, its record (the
// mirror's, else the bucket's for a name the mirror does not hold yet:
// a token another node created a moment ago) and the hash, compared in
// constant time. A revoked token's record is gone.
func (s *Store) Authenticate(ctx context.Context, token string) (sentinel.Principal, bool) {
	name, ok := nameOf(token)
	if !ok {
		return sentinel.Principal{}, false
	}
	r, ok := s.lookup(ctx, name)
	if !ok || !r.matches(token) {
		return sentinel.Principal{}, false
	}
	return r.Principal(), true
}

// lookup returns the record of name from the mirror, else from the
// bucket, remembering a name found in neither for missTTL.
func (s *Store) lookup(ctx context.Context, name string) (Record, bool) {
	now := s.now()
	s.mu.RLock()
	r, ok := s.recs[name]
	until, missed := s.misses[name]
	s.mu.RUnlock()
	if ok {
		return r, true
	}
	if missed && now.Before(until) {
		return Record{}, false
	}
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	// The bucket's leader, not a direct get: with AllowDirect a lagging
	// replica may answer, and miss a token another node created a moment
	// ago (seen under load: a fresh token refused on the third node).
	data, _, err := s.bus.LeaderLast(lctx, bus.KVStream(Bucket), bus.KVSubject(Bucket, name))
	if err == nil {
		if jerr := json.Unmarshal(data, &r); jerr == nil && r.Name == name {
			return r, true
		}
	}
	if err != nil && !errors.Is(err, bus.ErrNoMessage) {
		// The store did not answer: refuse this request, remember nothing.
		return Record{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.misses) >= missNames {
		clear(s.misses)
	}
	s.misses[name] = now.Add(missTTL)
	return Record{}, false
}

// Create stores a new named token and returns it, the only time it is
// shown, with its record. by names the principal that asked. A taken name
// is token_exists; bad fields are invalid_input (Validate).
func (s *Store) Create(ctx context.Context, name string, scope sentinel.Scope, sessions, by string) (string, Record, error) {
	if err := Validate(name, scope, sessions); err != nil {
		return "", Record{}, err
	}
	tok, err := newToken(name)
	if err != nil {
		return "", Record{}, err
	}
	r := Record{ID: ulid.Make().String(), Name: name, Scope: scope, Sessions: sessions, Hash: hashOf(tok),
		CreatedAt: s.now().UTC().Truncate(time.Millisecond), CreatedBy: by}
	raw, err := json.Marshal(r)
	if err != nil {
		return "", Record{}, fmt.Errorf("encode token record: %w", err)
	}
	if _, err := bus.NewKV(s.kv).Create(ctx, r.Name, raw); err != nil {
		if errors.Is(err, sentinel.ErrConflict) {
			return "", Record{}, sentinel.Errorf(sentinel.CodeTokenExists, "a token named %q exists: revoke it first, or choose another name", r.Name)
		}
		return "", Record{}, fmt.Errorf("store token %s: %w", r.Name, err)
	}
	s.mu.Lock()
	s.recs[r.Name] = r
	delete(s.misses, r.Name)
	s.mu.Unlock()
	s.log.Info("named token created", "name", r.Name, "scope", r.Scope, "sessions", r.Sessions, "by", by)
	return tok, r, nil
}

// List returns the named tokens' records, by name.
func (s *Store) List(context.Context) []Record {
	s.mu.RLock()
	out := make([]Record, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, r)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Revoke deletes a named token; every node refuses it once its mirror
// has the delete. An unknown name is token_not_found.
func (s *Store) Revoke(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return sentinel.Errorf(sentinel.CodeTokenNotFound, "no token named %q", clip(name))
	}
	k := bus.NewKV(s.kv)
	if _, _, err := k.Get(ctx, name); err != nil {
		if errors.Is(err, sentinel.ErrNotFound) {
			return sentinel.Errorf(sentinel.CodeTokenNotFound, "no token named %q", name)
		}
		return err
	}
	if err := k.Delete(ctx, name); err != nil {
		return fmt.Errorf("revoke token %s: %w", name, err)
	}
	s.mu.Lock()
	delete(s.recs, name)
	s.mu.Unlock()
	s.log.Info("named token revoked", "name", name)
	return nil
}

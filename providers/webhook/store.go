package webhook

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github"
)

// hookRecord is the stored state of one repository hook. It holds the HMAC
// secret: it is never logged, put in a handle or an error, and has no
// String method on purpose.
type hookRecord struct {
	// Key is the random route key: GitHub posts to /inbound/sentinel-<Key>.
	Key string `json:"key"`
	// Repo is owner/repo as the first sentinel spelled it.
	Repo string `json:"repo"`
	// HookID is GitHub's hook id.
	HookID int64 `json:"hookId"`
	// Secret is the HMAC-SHA256 key (64 hex = 32 random bytes).
	Secret string `json:"secret"`
	// Origin is the public origin the hook was last pointed at.
	Origin string `json:"origin"`
	// Holders are the handles' holder ids (a set): the hook is deleted with
	// the last one.
	Holders []string `json:"holders"`
	// Needs are, per holder, the webhook events its sentinel's types need
	// (github.HookEventsFor); a holder without an entry (created before
	// hooks followed their sentinels' types) needs what the default types
	// do.
	Needs map[string][]string `json:"needs,omitempty"`
	// Events are the events the hook was last subscribed to (empty when
	// not known: a record from before).
	Events []string `json:"events,omitempty"`
	// CreatedAt is when the record was first created (ISO-8601).
	CreatedAt string `json:"createdAt"`
	// Reconcile is the state of delivery reconciliation.
	Reconcile *github.Reconciliation `json:"reconcile,omitempty"`
}

// valid reports whether the record is usable (the reference drops records
// without a key, a secret or a hook id).
func (r *hookRecord) valid() bool {
	return routeKeyRe.MatchString(r.Key) && r.Secret != "" && r.HookID > 0 && r.Repo != ""
}

func (r *hookRecord) holds(holder string) bool { return slices.Contains(r.Holders, holder) }

func (r *hookRecord) addHolder(holder string) bool {
	if r.holds(holder) {
		return false
	}
	r.Holders = append(r.Holders, holder)
	return true
}

func (r *hookRecord) removeHolder(holder string) bool {
	delete(r.Needs, holder)
	i := slices.Index(r.Holders, holder)
	if i < 0 {
		return false
	}
	r.Holders = slices.Delete(r.Holders, i, i+1)
	return true
}

// setNeeds records the events holder's sentinel needs.
func (r *hookRecord) setNeeds(holder string, events []string) {
	if r.Needs == nil {
		r.Needs = map[string][]string{}
	}
	r.Needs[holder] = events
}

// wantEvents is what the hook must be subscribed to: the union of its
// holders' needs (a holder without recorded needs: defaultHookEvents), in
// github.WebhookEvents order.
func (r *hookRecord) wantEvents() []string {
	need := map[string]bool{}
	for _, e := range github.SpecHookEvents() {
		need[e] = true
	}
	for _, h := range r.Holders {
		evs, ok := r.Needs[h]
		if !ok {
			evs = defaultHookEvents()
		}
		for _, e := range evs {
			need[e] = true
		}
	}
	var out []string
	for _, e := range github.WebhookEvents() {
		if need[e] {
			out = append(out, e)
		}
	}
	return out
}

// defaultHookEvents are the events the default PR types need.
func defaultHookEvents() []string { return github.HookEventsFor(sentinel.DefaultPRTypes()) }

// sameEvents compares two event lists as sets.
func sameEvents(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// routeKeyRe is the shape of a route key (32 lower-case hex).
var routeKeyRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

// repoKey is the KV key of a repository's record: owner/repo lower-cased
// (GitHub names are case-insensitive) and base64url-encoded, so any name is
// a valid key.
func repoKey(repo string) string {
	return "repo." + base64.RawURLEncoding.EncodeToString([]byte(strings.ToLower(repo)))
}

// routeIndexKey is the KV key of the route-key index entry, whose value is
// the repository's record key.
func routeIndexKey(key string) string { return "route." + key }

// lockName is the per-repository lock.
func lockName(repo string) string { return "webhook." + repoKey(repo) }

// store reads and writes hook records in the KV with compare-and-set.
type store struct {
	kv interface {
		Get(ctx context.Context, key string) ([]byte, uint64, error)
		Create(ctx context.Context, key string, val []byte) (uint64, error)
		Update(ctx context.Context, key string, val []byte, rev uint64) (uint64, error)
		Put(ctx context.Context, key string, val []byte) (uint64, error)
		Delete(ctx context.Context, key string) error
	}
}

// load returns the repository's record and its revision; (nil, 0, nil)
// when there is none (or it is unusable).
func (s store) load(ctx context.Context, repo string) (*hookRecord, uint64, error) {
	raw, rev, err := s.kv.Get(ctx, repoKey(repo))
	if errors.Is(err, sentinel.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("load hook record of %s: %w", repo, err)
	}
	var rec hookRecord
	if json.Unmarshal(raw, &rec) != nil || !rec.valid() {
		return nil, rev, nil
	}
	return &rec, rev, nil
}

// byKey returns the record whose route key is key, or (nil, nil).
func (s store) byKey(ctx context.Context, key string) (*hookRecord, error) {
	if !routeKeyRe.MatchString(key) {
		return nil, nil
	}
	ref, _, err := s.kv.Get(ctx, routeIndexKey(key))
	if errors.Is(err, sentinel.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up hook route: %w", err)
	}
	raw, _, err := s.kv.Get(ctx, string(ref))
	if errors.Is(err, sentinel.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up hook record: %w", err)
	}
	var rec hookRecord
	if json.Unmarshal(raw, &rec) != nil || !rec.valid() || rec.Key != key {
		return nil, nil
	}
	return &rec, nil
}

// save writes rec (the route index first, so a record is never unroutable)
// with compare-and-set on rev (0: must not exist yet) and returns the new
// revision. The caller holds the repository lock; a conflict means the
// lock was lost.
func (s store) save(ctx context.Context, rec *hookRecord, rev uint64) (uint64, error) {
	if _, err := s.kv.Put(ctx, routeIndexKey(rec.Key), []byte(repoKey(rec.Repo))); err != nil {
		return 0, fmt.Errorf("save hook route of %s: %w", rec.Repo, err)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return 0, fmt.Errorf("encode hook record of %s: %w", rec.Repo, err)
	}
	var nrev uint64
	if rev == 0 {
		nrev, err = s.kv.Create(ctx, repoKey(rec.Repo), raw)
	} else {
		nrev, err = s.kv.Update(ctx, repoKey(rec.Repo), raw, rev)
	}
	if err != nil {
		return 0, fmt.Errorf("save hook record of %s: %w", rec.Repo, err)
	}
	return nrev, nil
}

// remove deletes the record and its route index.
func (s store) remove(ctx context.Context, rec *hookRecord) error {
	if err := s.kv.Delete(ctx, repoKey(rec.Repo)); err != nil {
		return fmt.Errorf("delete hook record of %s: %w", rec.Repo, err)
	}
	if err := s.kv.Delete(ctx, routeIndexKey(rec.Key)); err != nil {
		return fmt.Errorf("delete hook route of %s: %w", rec.Repo, err)
	}
	return nil
}

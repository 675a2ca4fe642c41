package sentinels

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// WatchIndexBucket is the KV bucket of the watch index: which sentinel
// holds a session's watch of one spec (key dup.<session>.<digest>) and
// which holds a session's watch key (key.<session>.<digest>). Each entry
// is claimed with a compare-and-set before the sentinel it names is
// created, so two nodes asked for the same watch at once create one
// sentinel (issue 29, part 2).
const WatchIndexBucket = "sentinel_watch_index"

// WatchIndexConfig is the watch index bucket's config. This package owns
// it; bus only provisions it.
func WatchIndexConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      WatchIndexBucket,
		Description: "sentinel: the session watch index (idempotent watches and watch keys)",
		History:     1,
	}
}

// WatchIndex is the watch index bucket.
type WatchIndex struct {
	kv jetstream.KeyValue
}

// OpenWatchIndex provisions the bucket (idempotent) and returns the index.
func OpenWatchIndex(ctx context.Context, b bus.Provisioner) (*WatchIndex, error) {
	kv, err := b.EnsureKeyValue(ctx, WatchIndexConfig())
	if err != nil {
		return nil, err
	}
	return &WatchIndex{kv: kv}, nil
}

// indexEntry is one index value: the sentinel id and when it was claimed.
type indexEntry struct {
	ID string `json:"id"`
	Ts int64  `json:"ts"`
}

// claimWait is how long a claimed entry whose sentinel does not exist yet
// is taken to be another node's create in progress (a provider create is
// bounded by ProviderTimeout, 30 s by default).
const claimWait = 45 * time.Second

// identity is what makes two watches of a session the same watch: their
// clauses, until and urgency (the target session is in the index key).
func identity(spec sentinel.Spec) []byte {
	raw, _ := json.Marshal(struct {
		Match   []sentinel.Clause `json:"match"`
		Until   sentinel.Until    `json:"until"`
		Urgency sentinel.Urgency  `json:"urgency"`
		Kind    string            `json:"kind"`
	}{spec.Match, spec.Until, spec.Target.Urgency, spec.Target.Kind})
	return raw
}

// sameWatch reports whether rec watches what spec asks for.
func sameWatch(rec *sentinel.Sentinel, spec sentinel.Spec) bool {
	return rec.Spec.Target.SessionID == spec.Target.SessionID && string(identity(rec.Spec)) == string(identity(spec))
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func dupIndexKey(spec sentinel.Spec) string {
	return "dup." + spec.Target.SessionID + "." + digest(identity(spec))
}

func keyIndexKey(spec sentinel.Spec) string {
	return "key." + spec.Target.SessionID + "." + digest([]byte(spec.Key))
}

// claim is the outcome of resolving one index entry.
type claim struct {
	// live is the pollable sentinel the entry names (nil when none).
	live *sentinel.Sentinel
	// id and rev: the entry was claimed for a new sentinel id (id != "")
	// at revision rev; the caller creates it, or releases the claim.
	id  string
	rev uint64
}

// resolve reads the entry at key: a pollable sentinel it names that fits
// is returned (live); else (no entry, or it names a sentinel that is gone,
// stopped or no longer fits) the entry is claimed for a new id with a
// compare-and-set, and the caller creates that sentinel. An entry whose
// sentinel does not exist yet and that was claimed less than claimWait
// ago is another caller's create in progress: resolve waits for it.
func (s *Service) resolve(ctx context.Context, key string, fits func(*sentinel.Sentinel) bool) (claim, error) {
	wait := 20 * time.Millisecond
	for attempt := 0; attempt < 200; attempt++ {
		e, err := s.index.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			id := sentinel.NewSentinelID()
			rev, cerr := s.index.kv.Create(ctx, key, s.entry(id))
			if isConflict(cerr) {
				continue
			}
			if cerr != nil {
				return claim{}, fmt.Errorf("watch index: %w", bus.Retryable(cerr))
			}
			return claim{id: id, rev: rev}, nil
		}
		if err != nil {
			return claim{}, fmt.Errorf("watch index: %w", bus.Retryable(err))
		}
		var ent indexEntry
		_ = json.Unmarshal(e.Value(), &ent)
		var rec *sentinel.Sentinel
		if ent.ID != "" {
			rec, err = s.lookup(ctx, ent.ID)
			switch {
			case err == nil:
				if rec.Status.Pollable() && fits(rec) {
					return claim{live: rec}, nil
				}
			case errors.Is(err, ErrNotFound):
				if s.now().UnixMilli()-ent.Ts < claimWait.Milliseconds() {
					if err := pauseFor(ctx, wait); err != nil {
						return claim{}, err
					}
					if wait < 500*time.Millisecond {
						wait *= 2
					}
					continue
				}
			default:
				return claim{}, err
			}
		}
		id := sentinel.NewSentinelID()
		rev, uerr := s.index.kv.Update(ctx, key, s.entry(id), e.Revision())
		if isConflict(uerr) {
			continue
		}
		if uerr != nil {
			return claim{}, fmt.Errorf("watch index: %w", bus.Retryable(uerr))
		}
		return claim{id: id, rev: rev}, nil
	}
	return claim{}, sentinel.Errorf(sentinel.CodeConflict, "the watch index entry %s kept changing; try again", key)
}

// point moves the entry at key, read at rev, to id (a key's sentinel
// replaced): compare-and-set, so a concurrent change wins and this one
// reports it.
func (s *Service) point(ctx context.Context, key, id string, rev uint64) (uint64, error) {
	nrev, err := s.index.kv.Update(ctx, key, s.entry(id), rev)
	if err != nil {
		return 0, fmt.Errorf("watch index: %w", bus.Retryable(err))
	}
	return nrev, nil
}

// release drops a claim whose create failed, when the entry is still it.
func (s *Service) release(ctx context.Context, key string, rev uint64) {
	if err := s.index.kv.Delete(context.WithoutCancel(ctx), key, jetstream.LastRevision(rev)); err != nil && !isConflict(err) {
		s.log.Warn("releasing a watch index claim failed", "key", key, "err", err)
	}
}

func (s *Service) entry(id string) []byte {
	raw, _ := json.Marshal(indexEntry{ID: id, Ts: s.now().UnixMilli()})
	return raw
}

func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence)
}

// pauseFor waits d or until ctx ends (a claim in progress on another node).
func pauseFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// unindex drops the index entries that name a removed sentinel (its
// spec's and its key's), each only while it still names it, so the next
// equal watch creates at once instead of waiting out claimWait.
func (s *Service) unindex(ctx context.Context, rec *sentinel.Sentinel) {
	if s.index == nil || rec.Spec.Target.Kind != sentinel.TargetSession {
		return
	}
	keys := []string{dupIndexKey(rec.Spec)}
	if rec.Spec.Key != "" {
		keys = append(keys, keyIndexKey(rec.Spec))
	}
	for _, key := range keys {
		e, err := s.index.kv.Get(ctx, key)
		if err != nil {
			continue
		}
		var ent indexEntry
		if json.Unmarshal(e.Value(), &ent) == nil && ent.ID == rec.ID {
			s.release(ctx, key, e.Revision())
		}
	}
}

package deliver

import (
	"context"
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/metrics"
)

// An event is deduplicated under every one of its seen keys
// (sentinel.Event.SeenKeys): its id and, for a GitHub webhook delivery,
// the digest of its signed body as well (Event.DedupKey). Either key in the
// window makes the event a duplicate, and handling it marks both, so
//   - GitHub's redelivery (same X-GitHub-Delivery, same body) is a
//     duplicate by its id;
//   - the signed body replayed under fresh delivery ids (that header is not
//     signed) is a duplicate by its body key;
//   - another body under a delivery id already handled (a forged header)
//     is a duplicate by its id;
//   - a delivery handled before ids were evt_<X-GitHub-Delivery> (its id
//     was the body digest, which the window still holds) is a duplicate by
//     its body key, which has the same value: the windows written then
//     need no rewrite.
// Both keys are written in the one record compare-and-set that writes the
// counters, so "seen" stays atomic with "handled".

// seenBefore reports whether any seen key of ev is in the sentinel's
// window: the record's ring, then, once the ring overflowed, the long
// window in the seen bucket.
func (p *Pipeline) seenBefore(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (bool, error) {
	if ringHolds(rec, ev) {
		return true, nil
	}
	if rec.SeenMarks <= rec.SeenLen() {
		return false, nil
	}
	for _, k := range ev.SeenKeys() {
		seen, err := p.seen.Has(ctx, rec.ID, k)
		if err != nil {
			return false, err
		}
		if seen {
			return true, nil
		}
	}
	return false, nil
}

// ringHolds reports whether r's in-record ring holds any seen key of ev.
func ringHolds(r *sentinel.Sentinel, ev *sentinel.Event) bool {
	for _, k := range ev.SeenKeys() {
		if r.HasSeen(k) {
			return true
		}
	}
	return false
}

// addSeen adds every seen key of ev to the record's ring. The digests the
// ring evicts are written to the long window before the record itself
// (this runs inside the record's compare-and-set function): a crash
// between the two writes leaves an id in both places, never in neither.
// Keeping a digest is idempotent, so a retried compare-and-set is safe; a
// failure fails the record write and leaves the event to be retried.
func (p *Pipeline) addSeen(ctx context.Context, sentinelID string, r *sentinel.Sentinel, ev *sentinel.Event) error {
	for _, k := range ev.SeenKeys() {
		if r.HasSeen(k) {
			continue
		}
		r.SeenMarks++
		for _, d := range r.AddSeen(k) {
			if err := p.seen.Keep(ctx, sentinelID, d); err != nil {
				return fmt.Errorf("keep evicted seen id of %s: %w", sentinelID, err)
			}
		}
	}
	return nil
}

// countSeenDuplicate counts an event dropped as already seen.
func (p *Pipeline) countSeenDuplicate() {
	p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.SeenDuplicates })
}

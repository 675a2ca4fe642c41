package agentpushtest

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/agentproto/sentinel"
)

// DefaultLimit is the page size when events is called without limit.
const DefaultLimit = 100

// MaxLimit is the largest page served.
const MaxLimit = 1000

// row is one queued delivery.
type row struct {
	seq        int64
	deliveryID string
	envelope   json.RawMessage
}

// itemJSON is the wire form of a row.
type itemJSON struct {
	DeliveryID string          `json:"delivery_id"`
	Seq        int64           `json:"seq"`
	Status     string          `json:"status"`
	Envelope   json.RawMessage `json:"envelope"`
}

// Enqueue queues ev on subscription id and returns its seq.
func (s *Server) Enqueue(id string, ev sentinel.Event) int64 {
	s.t.Helper()
	raw, err := json.Marshal(ev)
	if err != nil {
		s.t.Fatalf("agentpushtest: marshal event: %v", err)
	}
	return s.EnqueueRaw(id, raw)
}

// EnqueueRaw queues an arbitrary envelope (a poison row when it is not a
// valid SentinelEvent) on subscription id and returns its seq.
func (s *Server) EnqueueRaw(id string, envelope json.RawMessage) int64 {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.subs[id]
	if !ok {
		s.t.Fatalf("agentpushtest: no subscription %q", id)
		return 0
	}
	sb.nextSeq++
	sb.rows = append(sb.rows, row{
		seq:        sb.nextSeq,
		deliveryID: "dlv_" + id + "_" + strconv.FormatInt(sb.nextSeq, 10),
		envelope:   append(json.RawMessage(nil), envelope...),
	})
	return sb.nextSeq
}

// Publish queues ev on every live subscription whose subject matches one of
// the event's subjects and whose types (null = all) match its type, as the
// real service routes events. It returns the subscription ids it reached.
func (s *Server) Publish(ev sentinel.Event) []string {
	s.t.Helper()
	s.mu.Lock()
	var ids []string
	for _, id := range s.sortedIDs() {
		sb := s.subs[id]
		if !sentinel.SubjectMatches(sb.Subject, ev.AllSubjects()) {
			continue
		}
		if sb.Types != nil && !sentinel.TypesMatch(sb.Types, ev.Type) {
			continue
		}
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.Enqueue(id, ev)
	}
	return ids
}

// Pending returns the seqs of the unacked rows of subscription id.
func (s *Server) Pending(id string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.subs[id]
	if !ok {
		return nil
	}
	out := make([]int64, 0, len(sb.rows))
	for _, r := range sb.rows {
		out = append(out, r.seq)
	}
	return out
}

// Acked returns the highest seq acked on subscription id.
func (s *Server) Acked(id string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb, ok := s.subs[id]; ok {
		return sb.acked
	}
	return 0
}

func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := strconv.ParseInt(q.Get("after"), 10, 64)
	if q.Get("after") == "" {
		after, err = 0, nil
	}
	if err != nil || after < 0 {
		writeError(w, http.StatusBadRequest, "after must be a non-negative integer")
		return
	}
	limit := DefaultLimit
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > MaxLimit {
			writeError(w, http.StatusBadRequest, "limit must be between 1 and 1000")
			return
		}
	}
	sb, ok := s.lookup(w, r)
	if !ok {
		return
	}
	items := []itemJSON{}
	cursor := after
	for _, rw := range sb.rows {
		if rw.seq <= after {
			continue
		}
		if len(items) == limit {
			break
		}
		items = append(items, itemJSON{DeliveryID: rw.deliveryID, Seq: rw.seq, Status: "pending", Envelope: rw.envelope})
		cursor = rw.seq
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "cursor": strconv.FormatInt(cursor, 10)})
}

func (s *Server) handleAck(w http.ResponseWriter, r *http.Request) {
	var req struct {
		UpToSeq *int64 `json:"upToSeq"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.UpToSeq == nil || *req.UpToSeq < 1 {
		writeError(w, http.StatusBadRequest, "upToSeq must be a positive integer")
		return
	}
	sb, ok := s.lookup(w, r)
	if !ok {
		return
	}
	removed := sb.ackLocked(*req.UpToSeq)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "acked": removed})
}

// ackLocked removes the rows up to seq and returns how many. mu must be
// held.
func (sb *sub) ackLocked(seq int64) int {
	kept := sb.rows[:0]
	removed := 0
	for _, r := range sb.rows {
		if r.seq <= seq {
			removed++
			continue
		}
		kept = append(kept, r)
	}
	sb.rows = kept
	if seq > sb.acked {
		sb.acked = seq
	}
	return removed
}

package sentinels

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/runtime/pause"
)

// PointMirrorApply is reached by the mirror's watcher goroutine before it
// applies each update: holding it stalls the mirror without closing it.
const PointMirrorApply pause.Point = "sentinels.mirror-apply"

// defaultMirrorCheck is the default of WithMirrorCheck.
const defaultMirrorCheck = 10 * time.Second

// supervisor keeps the record mirror alive (issue 21, item 10). Every
// mirrorCheck it restarts a mirror whose watcher ended by itself (the
// store read the bucket meanwhile), and one that stalled without closing:
// the bucket's last revision ahead of what the mirror applied, with no
// progress since the previous look. A stalled mirror would go on serving
// ever staler records.
type supervisor struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *Store) superviseMirror() {
	every := s.mirrorCheck
	if every <= 0 {
		every = defaultMirrorCheck
	}
	ctx, cancel := context.WithCancel(context.Background())
	sup := &supervisor{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.sup = sup
	s.mu.Unlock()
	go func() {
		defer close(sup.done)
		t := time.NewTicker(every)
		defer t.Stop()
		behind, at := false, uint64(0) // behind at the last look, at upTo
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			c := s.mirror()
			if c != nil {
				last, ok := s.lastRevision(ctx, every)
				up := c.upTo.Load()
				switch {
				case !ok || up >= last:
					behind = false
					continue
				case !behind || up > at:
					behind, at = true, up // behind: look again next time
					continue
				}
				// Behind and no progress since the last look: stalled.
				c.stop()
				<-c.done
				s.dropMirror(c)
				behind = false
			}
			sctx, cancel := context.WithTimeout(ctx, every)
			nc, err := s.startMirror(sctx)
			cancel()
			if err != nil {
				continue // the bucket is read meanwhile; next look retries
			}
			s.mu.Lock()
			if s.sup == sup && s.cache == nil {
				s.cache = nc
				nc = nil
			}
			s.mu.Unlock()
			if nc != nil { // stopped meanwhile
				nc.stop()
				<-nc.done
			}
		}
	}()
}

// lastRevision is the records bucket's last revision.
func (s *Store) lastRevision(ctx context.Context, within time.Duration) (uint64, bool) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	st, err := s.kv.Status(ctx)
	if err != nil {
		return 0, false
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return 0, false
	}
	return bs.StreamInfo().State.LastSeq, true
}

func (s *Store) stopSupervisor() {
	s.mu.Lock()
	sup := s.sup
	s.sup = nil
	s.mu.Unlock()
	if sup != nil {
		sup.cancel()
		<-sup.done
	}
}

package poll

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/agentproto/sentinel/runtime/cluster"

	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// cancelWorker runs the provider cancels recorded as tombstones (the
// cancels of expired sentinels, and failed cancels awaiting retry) off the
// tick, so a remote that hangs delays neither the polls nor shutdown. Run
// owns it: one goroutine dispatches a sweep whenever asked, each cancel
// runs in its own goroutine holding one of the tombstones' Slots (a due
// cancel that finds none free waits for a later sweep, which a finishing
// cancel asks for), and a remote already in flight is not dispatched again.
type cancelWorker struct {
	loop  *Loop
	ts    *sentinels.Tombstones
	slots chan struct{}
	// backlog is set when a sweep left due cancels for want of a slot.
	backlog atomic.Bool
	wg      sync.WaitGroup

	mu       sync.Mutex
	inFlight map[string]bool // mu must be held
}

// PointSweepSkipped is reached when a tombstone sweep is asked of a node
// that does not own the tombstones job (it dispatches nothing).
const PointSweepSkipped pause.Point = "poll.sweep-skipped"

// startCancels starts Run's cancel worker with a first sweep (the start-up
// sweep) and returns the function that stops it: it cancels the cancels in
// flight (their tombstones stay due) and waits for every goroutine of the
// worker to return.
func (l *Loop) startCancels(ctx context.Context) (stop func()) {
	if l.expirer == nil || l.expirer.Tombstones() == nil {
		return func() {}
	}
	ts := l.expirer.Tombstones()
	w := &cancelWorker{loop: l, ts: ts, slots: make(chan struct{}, ts.Slots()), inFlight: map[string]bool{}}
	wctx, cancel := context.WithCancel(ctx)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.run(wctx)
	}()
	l.workerUp.Store(true)
	l.askSweep()
	return func() {
		l.workerUp.Store(false)
		cancel()
		w.wg.Wait()
	}
}

// run dispatches a sweep whenever asked (asks that arrive during one
// coalesce into the next) until ctx ends.
func (w *cancelWorker) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.loop.sweepKick:
		}
		w.dispatch(ctx)
	}
}

// dispatch starts the due cancels that are not in flight, as long as
// slots are free, on the node that owns the tombstones job only: the
// start-up sweep and the backlog re-sweeps came on every node (issue 21,
// item 9: idempotent, but every provider cancel made once per node).
func (w *cancelWorker) dispatch(ctx context.Context) {
	if own := w.loop.ownership; own.Writable() != nil || !own.OwnsJob(cluster.JobTombstones) {
		_ = w.loop.pause.At(ctx, PointSweepSkipped, "")
		return
	}
	due, err := w.ts.Due(ctx, w.loop.registry, w.loop.store)
	if err != nil {
		if ctx.Err() == nil {
			w.loop.log.Warn("tombstone sweep failed", "err", err)
		}
		return
	}
	w.backlog.Store(false)
	for _, p := range due {
		if !w.claim(p.Key) {
			continue
		}
		select {
		case w.slots <- struct{}{}:
		default:
			w.release(p.Key)
			w.backlog.Store(true)
			return
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.ts.Cancel(ctx, p)
			<-w.slots
			w.release(p.Key)
			if w.backlog.Load() && ctx.Err() == nil {
				w.loop.askSweep()
			}
		}()
	}
}

// claim marks key in flight; it reports false when it already was.
func (w *cancelWorker) claim(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inFlight[key] {
		return false
	}
	w.inFlight[key] = true
	return true
}

func (w *cancelWorker) release(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.inFlight, key)
}

// sweepCancels runs the tick's tombstone sweep: handed to the worker while
// Run runs, else (a tick outside Run: PollNow before Start, tests) in place.
func (l *Loop) sweepCancels(ctx context.Context) {
	if l.expirer == nil || l.expirer.Tombstones() == nil {
		return
	}
	if l.workerUp.Load() {
		l.askSweep()
		return
	}
	l.expirer.Tombstones().Sweep(ctx, l.registry, l.store)
}

// askSweep asks the cancel worker for a sweep (without waiting).
func (l *Loop) askSweep() {
	select {
	case l.sweepKick <- struct{}{}:
	default:
	}
}

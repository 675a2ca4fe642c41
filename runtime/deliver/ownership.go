package deliver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// delivery is a worker's hold on the message it handles. JetStream
// redelivers a message whose ack wait ran out since its delivery or its
// last in-progress ping, and it acks (and naks) by stream sequence
// whatever the delivery: a worker that lost its hold (it paused past the
// ack wait: a stalled process, a long GC, a VM paused) and then acks
// would release the partition's next event while the redelivery is in
// flight on another node, two events of one partition at once; its nak
// would send the event out a third time. So a worker settles only a
// delivery it still holds; one it lost is the live holder's to settle
// (issue 21, item 3).
//
// A hold lasts heldFor past the receipt and each ping sent while it
// still held: two thirds of the ack wait (pings go every quarter), leaving
// the last third for the lag between the server's timer and this node's
// clock (the server starts the timer when it sends the message, before
// this node receives it) and for the ack to reach the server. Once lost it stays lost: a ping sent after
// a pause does not win back a message the server may have handed on.
type delivery struct {
	heldFor time.Duration
	now     func() time.Time

	mu   sync.Mutex
	last time.Time // the receipt, or the last ping sent while held
	lost bool
}

func newDelivery(ackWait time.Duration, now func() time.Time) *delivery {
	return &delivery{heldFor: 2 * ackWait / 3, now: now, last: now()}
}

// held reports whether the worker still holds the delivery.
func (d *delivery) held() bool {
	if d == nil {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.heldLocked()
}

// heldLocked is held; mu must be held.
func (d *delivery) heldLocked() bool {
	if !d.lost && cluster.Elapsed(d.last, d.now()) >= d.heldFor {
		d.lost = true
	}
	return !d.lost
}

// renew extends a hold that is still held, just before its ping is sent;
// it reports false (send nothing) once the hold is lost.
func (d *delivery) renew() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.heldLocked() {
		return false
	}
	d.last = d.now()
	return true
}

// fence gives the hold up: the event's record showed another handler (its
// redelivery) stored it meanwhile, so the delivery is that handler's.
func (d *delivery) fence() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.lost = true
	d.mu.Unlock()
}

// errLost fails a pipeline step its worker no longer holds the delivery
// for: a message stored now could land after the live holder's, at
// another target (a session resumed meanwhile under a new id).
var errLost = errors.New("deliver: this node no longer holds the delivery (its ack wait ran out): it is left to its live holder")

// beforeSend is the fence of every message write: reached at PointSend,
// it fails once the worker's hold on the delivery is lost, so a node that
// paused past the ack wait stores nothing at the target it decided on
// before the pause (issue 21, item 8). What is left is the write of a node
// that pauses after this check and before its write reaches the stream:
// the message id (the sentinel and the event, whatever the session) makes
// that write a duplicate within bus.inbox_duplicates.
func (p *Pipeline) beforeSend(ctx context.Context, ev *sentinel.Event) error {
	if err := p.pause.At(ctx, PointSend, ev.ID); err != nil {
		return err
	}
	if !deliveryOf(ctx).held() {
		return errLost
	}
	return nil
}

type deliveryKey struct{}

// withDelivery hands the worker's hold to the pipeline run under ctx.
func withDelivery(ctx context.Context, d *delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}

// deliveryOf is the hold of the delivery ctx's pipeline run handles, nil
// outside a worker (a direct Handle call holds nothing to lose).
func deliveryOf(ctx context.Context) *delivery {
	d, _ := ctx.Value(deliveryKey{}).(*delivery)
	return d
}

package bench

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pullWait bounds one pull request of the baselines' consumers; an idle
// consumer re-pulls after it (the delivery workers use the same bound).
const pullWait = 30 * time.Second

// pullers run the baselines' pull consumers with the delivery workers'
// discipline: one message in flight, each pull a fresh Fetch(1) issued
// only after the previous message was handled.
//
// A long-lived Consume(PullMaxMessages(1)) stalls here (nats.go v1.55):
// its pull goroutine marks a request in progress, writes it and only then
// clears the mark; a reply handled in between skips the follow-up pull,
// nothing re-checks, and the subscription has no request at the server
// until its missed-heartbeat timer re-pulls, 2 x 15 s = 30 s later. A
// loaded machine (a thread descheduled between the write and the clear)
// makes it likely. A Fetch loop has no such shared mark: the next request
// is issued by the goroutine that handled the message.
type pullers struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newPullers(ctx context.Context) *pullers {
	p := &pullers{}
	p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return p
}

// run pulls cons until stop, handing each message to handle (which acks
// or naks it). A failed pull is retried after a short pause.
func (p *pullers) run(cons jetstream.Consumer, handle func(ctx context.Context, m jetstream.Msg)) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for p.ctx.Err() == nil {
			fctx, cancel := context.WithTimeout(p.ctx, pullWait)
			batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
			if err != nil {
				cancel()
				select {
				case <-p.ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
				continue
			}
			for m := range batch.Messages() {
				handle(p.ctx, m)
			}
			cancel()
		}
	}()
}

// stop ends every pull loop and waits for them.
func (p *pullers) stop() {
	p.cancel()
	p.wg.Wait()
}

package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Options configure a run.
type Options struct {
	// Seed draws the fault schedule.
	Seed uint64
	// Duration bounds the fault schedule and is the least time the
	// workload runs (longer only while the last fault heals); Settle bounds the
	// wait, after it, for every accepted event to be seen in its inbox,
	// and Quiet is the extra time given to late duplicates before the
	// inboxes are read.
	Duration, Settle, Quiet time.Duration
	// Kinds are the fault kinds to draw (default: every kind the target
	// supports).
	Kinds []Kind
	// AckWait is the nodes' bus.ack_wait (a pause holds longer).
	AckWait time.Duration
	// Sessions, PushSentinels and PollSentinels size the workload: the
	// sentinels are spread over the sessions.
	Sessions, PushSentinels, PollSentinels int
	// Interval spaces one push sender's sends; FeedInterval the feed's
	// appends (one event per poll sentinel each).
	Interval, FeedInterval time.Duration
	// RequestTimeout bounds one push request (a paused node never
	// answers); SendTimeout one send's attempts over every node.
	RequestTimeout, SendTimeout time.Duration
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
}

// DefaultOptions are the defaults of `sentinel chaos`.
func DefaultOptions() Options {
	return Options{
		Seed: 1, Duration: 60 * time.Second, Settle: 60 * time.Second, Quiet: 3 * time.Second,
		AckWait: 4 * time.Second, Sessions: 3, PushSentinels: 6, PollSentinels: 3,
		Interval: 100 * time.Millisecond, FeedInterval: 500 * time.Millisecond,
		RequestTimeout: 3 * time.Second, SendTimeout: 30 * time.Second,
	}
}

// Validate names the first bad option.
func (o Options) Validate() error {
	switch {
	case o.Duration < 5*time.Second:
		return fmt.Errorf("duration %s: give at least 5s", o.Duration)
	case o.Settle <= 0:
		return fmt.Errorf("settle %s: give a positive duration", o.Settle)
	case o.Sessions < 1:
		return fmt.Errorf("sessions %d: give at least 1", o.Sessions)
	case o.PushSentinels < 1:
		return fmt.Errorf("push sentinels %d: give at least 1", o.PushSentinels)
	case o.PollSentinels < 0:
		return fmt.Errorf("poll sentinels %d: give 0 or more", o.PollSentinels)
	case o.Interval < 0 || o.FeedInterval <= 0:
		return errors.New("intervals: give positive durations")
	case o.RequestTimeout <= 0 || o.SendTimeout < o.RequestTimeout:
		return errors.New("timeouts: the request timeout must be positive and at most the send timeout")
	case o.AckWait < time.Second:
		return fmt.Errorf("ack wait %s: bus.ack_wait is at least 1s", o.AckWait)
	}
	return nil
}

// PlanFor is the schedule a run with o draws on target kinds.
func PlanFor(o Options, nodes int, kinds []Kind) []Fault {
	return Plan(o.Seed, PlanOptions{Duration: o.Duration, Nodes: nodes, Kinds: kinds, AckWait: o.AckWait,
		Warmup: 3 * time.Second, Tail: 3 * time.Second, Gap: 3 * time.Second, RecoveryAllowance: 8 * time.Second})
}

// Run runs the workload and the nemesis against t for o.Duration, lets
// the cluster settle, reads every inbox and checks the history. An error
// is a run that could not be carried out (setup, a fault that could not
// be injected, an unreadable inbox); the report's verdict says whether
// the service kept its guarantees.
func Run(ctx context.Context, t Target, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	kinds := o.Kinds
	if len(kinds) == 0 {
		kinds = t.Kinds()
	}
	for _, k := range kinds {
		if !supports(t, k) {
			return nil, fmt.Errorf("the %s target cannot inject %s: %w", t.Name(), k, errNotSupported)
		}
	}
	rep := &Report{Seed: o.Seed, Target: t.Name(), Nodes: t.Names(), Started: time.Now().UTC(),
		DurationMs: o.Duration.Milliseconds(), Kinds: kinds}
	rep.Schedule = PlanFor(o, len(rep.Nodes), kinds)
	tag, err := runTag()
	if err != nil {
		return nil, err
	}
	c := newClient(t.Token())
	defer c.close()
	o.Progress("waiting until every node is ready and every stream and bucket current")
	hctx, cancel := context.WithTimeout(ctx, healthyTimeout)
	err = waitHealthy(hctx, t, c)
	cancel()
	if err != nil {
		return rep, fmt.Errorf("the cluster is not healthy before the run: %w", err)
	}
	w := &workload{t: t, c: c, tag: tag, o: o, seen: newSightings(), errLog: o.Progress}
	ss, err := w.setup(ctx)
	if err != nil {
		return rep, err
	}
	var push, poll []watched
	sessions := map[string]bool{}
	for _, s := range ss {
		sessions[s.session] = true
		if s.path == "push" {
			push = append(push, s)
		} else {
			poll = append(poll, s)
		}
	}
	rep.Sessions, rep.PushSentinels, rep.PollSentinels = len(sessions), len(push), len(poll)
	o.Progress("workload: %d push and %d poll sentinels over %d sessions on %d nodes; %d faults planned (seed %d)",
		len(push), len(poll), len(sessions), len(rep.Nodes), len(rep.Schedule), o.Seed)

	// The readers run until the inboxes are read; the senders until the
	// duration ends.
	rctx, stopReaders := context.WithCancel(ctx)
	var readers sync.WaitGroup
	k := 0
	for s := range sessions {
		readers.Go(func() { w.follow(rctx, s, k) })
		k++
	}
	defer func() {
		stopReaders()
		readers.Wait()
	}()

	// The senders run for the duration, and past it until the last fault
	// has healed (a slow recovery delays the faults after it): every
	// planned fault runs under load.
	start := time.Now()
	rep.Started = start.UTC()
	wctx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var senders sync.WaitGroup
	for i, s := range push {
		senders.Go(func() { w.push(wctx, s, i) })
	}
	var feedErr error
	if len(poll) > 0 {
		senders.Go(func() { feedErr = w.poll(wctx, poll) })
	}
	rep.Faults = nemesis(ctx, t, c, start, rep.Schedule, o.Progress)
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(start.Add(o.Duration))):
	}
	stopWork()
	senders.Wait()
	rep.WorkloadMs = ms(time.Since(start))
	if feedErr != nil {
		return rep, feedErr
	}
	for _, f := range rep.Faults {
		if f.Error != "" {
			return rep, fmt.Errorf("fault %s on %s: %s", f.Fault.Kind, f.NodeName, f.Error)
		}
	}
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}

	sends := w.snapshot()
	o.Progress("workload: %d events sent; settling (at most %s)", len(sends), o.Settle)
	settleStart := time.Now()
	if err := settle(ctx, t, w, sends, o.Settle); err != nil {
		o.Progress("settle: %v", err)
	}
	select {
	case <-ctx.Done():
		return rep, ctx.Err()
	case <-time.After(o.Quiet):
	}
	rep.SettleMs = ms(time.Since(settleStart))
	stopReaders()
	readers.Wait()

	var msgs []Message
	for s := range sessions {
		m, err := w.readAll(ctx, s)
		if err != nil {
			return rep, err
		}
		msgs = append(msgs, m...)
	}
	o.Progress("inboxes read: %d messages", len(msgs))
	recovery(rep.Faults, sends, w.seen)
	rep.Verdict = Check(sends, msgs)
	rep.Paths = pathCounts(sends, msgs)
	rep.FinishedMs = ms(time.Since(start))
	return rep, nil
}

// settle waits, bounded, until the cluster is healthy and every accepted
// send has been seen in an inbox by the readers.
func settle(ctx context.Context, t Target, w *workload, sends []Send, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if err := waitHealthy(ctx, t, w.c); err != nil {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := 0
		for _, s := range sends {
			if _, ok := w.seen.at(s.ID); s.Outcome == Accepted && !ok {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d accepted events not seen in an inbox within %s", missing, within)
		case <-tick.C:
		}
	}
}

func supports(t Target, k Kind) bool {
	for _, s := range t.Kinds() {
		if s == k {
			return true
		}
	}
	return false
}

// runTag is a random tag in every id of a run, so that runs against one
// long-lived compose project never mix.
func runTag() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("draw the run tag: %w", err)
	}
	return hex.EncodeToString(b), nil
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/metrics"
)

// PushResult is the push path at one fsync setting beside its two
// baselines on the same server, in the same run, with the same senders:
// raw JetStream (no HTTP) and the hand-rolled HTTP relay.
type PushResult struct {
	Fsync       string  `json:"fsync"`
	Concurrency int     `json:"concurrency"`
	Events      int     `json:"events"`
	Push        Path    `json:"push"`
	Raw         Path    `json:"rawJetStream"`
	Ratio       float64 `json:"throughputRatio"`
	AddedP50Ms  float64 `json:"addedP50Ms"`
	AddedP99Ms  float64 `json:"addedP99Ms"`
	// Relay is the HTTP relay; RelayRatio is node / relay events per
	// second, RelayAddedP50Ms and RelayAddedP99Ms the node's latency over
	// the relay's.
	Relay           Path    `json:"httpRelay"`
	RelayRatio      float64 `json:"relayRatio"`
	RelayAddedP50Ms float64 `json:"relayAddedP50Ms"`
	RelayAddedP99Ms float64 `json:"relayAddedP99Ms"`
	// StepsUs is the node's mean time per event in each step of its way
	// (metrics.Steps, sentinel_event_step_seconds) over the measured
	// events, in microseconds. Steps overlap: ingress_handle holds publish,
	// pipeline holds the record and inbox steps, and on the direct path the
	// inbox and record writes run beside each other.
	StepsUs map[string]float64 `json:"stepsUs,omitempty"`
	// BackloggedShare is the share of the node's deliveries over the
	// measured events that had another event of their partition already
	// waiting behind them (sentinel_deliveries_backlogged_total): what a
	// partition's backlog handled as one batch could take together
	// (issue 28, lever 1). Zero with one sender: its next event is sent
	// once the last one's inbox message is stored.
	BackloggedShare float64 `json:"backloggedShare"`
}

// Path is one measured path: events per second over the measured window
// and per-event latency.
type Path struct {
	EventsPerSec float64 `json:"eventsPerSec"`
	Latency      Latency `json:"latency"`
}

// pushTimeout bounds the wait for one event's inbox message.
const pushTimeout = 30 * time.Second

// pushRounds is the number of rounds the measured events are split into:
// the three paths take turns round by round, so a burst of load on the
// shared machine falls on all of them rather than on one.
const pushRounds = 5

// signer is the fake provider's signing method.
type signer interface{ Sign(body []byte) string }

// fakeSignatureHeader carries the fake provider's signature.
const fakeSignatureHeader = "X-Fake-Signature"

// runPush measures the push path and its two baselines on one in-process
// node.
func runPush(ctx context.Context, n *node, o Options) (PushResult, error) {
	res := PushResult{Fsync: fsyncName(n.fsync), Concurrency: o.Concurrency, Events: o.Events}
	prov, ok := n.app.Registry.Get("fake")
	if !ok {
		return res, errors.New("the fake provider is not registered")
	}
	sg, ok := prov.(signer)
	if !ok {
		return res, errors.New("the fake provider cannot sign pushes")
	}
	pusher, err := newPushPath(ctx, n, sg, o.Concurrency)
	if err != nil {
		return res, fmt.Errorf("push path: set up: %w", err)
	}
	defer pusher.close()
	js, err := n.js()
	if err != nil {
		return res, err
	}
	raw, err := newRawPath(ctx, js, n.app.NATSConn(), o.Concurrency, 1)
	if err != nil {
		return res, fmt.Errorf("raw JetStream: set up: %w", err)
	}
	defer raw.close()
	relay, err := newRelayPath(ctx, n, o.Concurrency)
	if err != nil {
		return res, fmt.Errorf("HTTP relay: set up: %w", err)
	}
	defer relay.close()
	paths := []struct {
		name string
		send func(ctx context.Context, w int, id string) error
		out  *Path
	}{{"push path", pusher.send, &res.Push}, {"raw JetStream", raw.send, &res.Raw}, {"HTTP relay", relay.send, &res.Relay}}
	// Warm every path, then measure them in turns.
	for _, p := range paths {
		if _, _, err := measure(ctx, o.Warmup, o.Concurrency, "warm", p.send); err != nil {
			return res, fmt.Errorf("%s warm-up: %w", p.name, err)
		}
	}
	stepsBefore := n.app.Metrics.StepTotals()
	backlogBefore := n.app.Metrics.DeliveryBacklog()
	lats := make([][]time.Duration, len(paths))
	walls := make([]time.Duration, len(paths))
	rounds := min(pushRounds, max(1, o.Events/(10*o.Concurrency)))
	for r := range rounds {
		share := o.Events / rounds
		if r < o.Events%rounds {
			share++
		}
		for i, p := range paths {
			l, wall, err := sample(ctx, share, o.Concurrency, "run"+strconv.Itoa(r), p.send)
			if err != nil {
				return res, fmt.Errorf("%s: %w", p.name, err)
			}
			lats[i] = append(lats[i], l...)
			walls[i] += wall
		}
	}
	for i, p := range paths {
		p.out.Latency = summarize(lats[i])
		if walls[i] > 0 {
			p.out.EventsPerSec = float64(len(lats[i])) / walls[i].Seconds()
		}
	}
	res.StepsUs = stepMeans(stepsBefore, n.app.Metrics.StepTotals())
	backlog := n.app.Metrics.DeliveryBacklog()
	if got := backlog.Received - backlogBefore.Received; got > 0 {
		res.BackloggedShare = float64(backlog.Backlogged-backlogBefore.Backlogged) / float64(got)
	}
	if res.Raw.EventsPerSec > 0 {
		res.Ratio = res.Push.EventsPerSec / res.Raw.EventsPerSec
	}
	if res.Relay.EventsPerSec > 0 {
		res.RelayRatio = res.Push.EventsPerSec / res.Relay.EventsPerSec
	}
	res.AddedP50Ms = res.Push.Latency.P50Ms - res.Raw.Latency.P50Ms
	res.AddedP99Ms = res.Push.Latency.P99Ms - res.Raw.Latency.P99Ms
	res.RelayAddedP50Ms = res.Push.Latency.P50Ms - res.Relay.Latency.P50Ms
	res.RelayAddedP99Ms = res.Push.Latency.P99Ms - res.Relay.Latency.P99Ms
	return res, nil
}

// stepMeans is each step's mean between two readings, in microseconds
// (steps not taken between them are left out).
func stepMeans(before, after metrics.StepTotals) map[string]float64 {
	out := map[string]float64{}
	for step, a := range after {
		b := before[step]
		if n := a.Count - b.Count; n > 0 {
			out[step] = float64((a.Sum - b.Sum).Microseconds()) / float64(n)
		}
	}
	return out
}

// measure runs total sends over c workers (worker w sends its share one at
// a time) and returns the latency summary and the throughput over the
// whole window.
func measure(ctx context.Context, total, c int, tag string, send func(ctx context.Context, w int, id string) error) (Latency, float64, error) {
	lats, wall, err := sample(ctx, total, c, tag, send)
	if err != nil || len(lats) == 0 {
		return Latency{}, 0, err
	}
	return summarize(lats), float64(len(lats)) / wall.Seconds(), nil
}

// sample runs total sends over c workers (worker w sends its share one at
// a time) and returns every send's latency and the wall time of the
// window.
func sample(ctx context.Context, total, c int, tag string, send func(ctx context.Context, w int, id string) error) ([]time.Duration, time.Duration, error) {
	if total <= 0 {
		return nil, 0, nil
	}
	lats := make([][]time.Duration, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		share := total / c
		if w < total%c {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range share {
				id := tag + "-" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
				t0 := time.Now()
				if err := send(ctx, w, id); err != nil {
					errs[w] = err
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, 0, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	return all, wall, nil
}

// pushPath posts signed fake events to one sentinel per worker and waits
// for the inbox message on the worker's session.
type pushPath struct {
	n       *node
	sg      signer
	urls    []string
	subject []string
	landed  []chan struct{}
	unsub   []func()
}

func newPushPath(ctx context.Context, n *node, sg signer, c int) (*pushPath, error) {
	p := &pushPath{n: n, sg: sg}
	for w := range c {
		session := "bench-push-" + strconv.Itoa(w)
		subject := "github:bench/push#" + strconv.Itoa(w+1)
		_, key, err := n.watch(ctx, subject, session)
		if err != nil {
			p.close()
			return nil, err
		}
		ch := make(chan struct{}, 1)
		unsub, err := n.app.Inbox.Subscribe(session, func() {
			select {
			case ch <- struct{}{}:
			default:
			}
		})
		if err != nil {
			p.close()
			return nil, err
		}
		p.urls = append(p.urls, n.url+"/inbound/sentinel-"+key)
		p.subject = append(p.subject, subject)
		p.landed = append(p.landed, ch)
		p.unsub = append(p.unsub, unsub)
	}
	return p, nil
}

func (p *pushPath) send(ctx context.Context, w int, id string) error {
	body, err := json.Marshal(benchEvent(id, p.subject[w]))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.urls[w], bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(fakeSignatureHeader, p.sg.Sign(body))
	resp, err := p.n.http.Do(req)
	if err != nil {
		return err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST inbound: %d %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return wait(ctx, p.landed[w], "inbox message")
}

func (p *pushPath) close() {
	for _, u := range p.unsub {
		u()
	}
}

// rawPath is the baseline: publish with PubAck to RAWBENCH_IN, a pull
// consumer (one per sender, like the node's partition consumers, with
// their discipline: see pullers) builds the same inbox message, publishes
// it to RAWBENCH_OUT with a message id and acks; a core subscription sees
// it land.
type rawPath struct {
	*chain
}

// newRawPath provisions the raw chain (streams RAWBENCH_IN and
// RAWBENCH_OUT) with replicas replicas on the server js talks to and
// starts c consumers; nc sees the output land.
func newRawPath(ctx context.Context, js jetstream.JetStream, nc *bus.Conn, c, replicas int) (*rawPath, error) {
	ch, err := newChain(ctx, js, nc, "RAWBENCH", c, replicas, "sen_raw", "fake")
	if err != nil {
		return nil, err
	}
	return &rawPath{ch}, nil
}

func (r *rawPath) send(ctx context.Context, w int, id string) error {
	raw, err := json.Marshal(benchEvent(id, "github:bench/raw#1"))
	if err != nil {
		return err
	}
	if _, err := r.js.Publish(ctx, "rawbench.in."+strconv.Itoa(w), raw, jetstream.WithMsgID(bus.EventMsgID("sen_raw", id))); err != nil {
		return err
	}
	return wait(ctx, r.landed[w], "raw message")
}

func wait(ctx context.Context, ch <-chan struct{}, what string) error {
	t := time.NewTimer(pushTimeout)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return fmt.Errorf("the %s did not land within %s", what, pushTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// benchEvent is a small CloudEvent (a completed check suite) for subject.
func benchEvent(id, subject string) sentinel.Event {
	ref, err := sentinel.ParseGitHubSubject(subject)
	subjects := []string{subject}
	if err == nil {
		subjects = ref.Subjects()
	}
	return sentinel.NewEvent(id, "//agentproto.local/sentinel/bench", "github.check_suite.completed", subject, subjects,
		time.Now().UTC(), "check suite completed on "+subject, false, map[string]any{"conclusion": "success", "id": id})
}

func fsyncName(always bool) string {
	if always {
		return "always"
	}
	return "default"
}

package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// sustainedFlows is how many sentinels (and raw flows) share the load.
const sustainedFlows = 16

// BenchmarkPipelineSustained measures the rate the pipeline sustains: one
// publisher publishes synchronously (waiting for each PubAck) as fast as it
// can, round-robin over 16 sentinels, while the partition consumers deliver
// concurrently; the clock stops when every inbox message has landed. The
// raw JetStream baseline does the same transport work with the same
// parallelism: sync publishes round-robin over 16 subjects, 16 pull
// consumers (one fresh Fetch(1) at a time) that publish the same inbox
// message to a second stream and ack. Latency is per event, from the start
// of its publish to its inbox message landing.
//
//	go test -run '^$' -bench PipelineSustained -benchtime 4000x ./runtime/deliver/
func BenchmarkPipelineSustained(b *testing.B) {
	for _, fsync := range []bool{true, false} {
		name := "fsync=always"
		if !fsync {
			name = "fsync=default"
		}
		b.Run(name+"/pipeline", func(b *testing.B) { benchSustainedPipeline(b, fsync) })
		b.Run(name+"/raw-jetstream", func(b *testing.B) { benchSustainedRaw(b, fsync) })
	}
}

// landing records when each event's message lands.
type landing struct {
	mu     sync.Mutex
	start  map[string]time.Time
	lat    []time.Duration
	all    chan struct{}
	target int
}

func newLanding(n int) *landing {
	return &landing{start: make(map[string]time.Time, n), all: make(chan struct{}), target: n}
}

func (l *landing) begin(id string) {
	l.mu.Lock()
	l.start[id] = time.Now()
	l.mu.Unlock()
}

func (l *landing) landed(id string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.start[id]; ok {
		delete(l.start, id)
		l.lat = append(l.lat, now.Sub(s))
		if len(l.lat) == l.target {
			close(l.all)
		}
	}
}

func (l *landing) wait(b *testing.B) {
	select {
	case <-l.all:
	case <-time.After(60 * time.Second):
		l.mu.Lock()
		defer l.mu.Unlock()
		b.Fatalf("only %d of %d messages landed", len(l.lat), l.target)
	}
}

// eventIDOf extracts the event id from an inbox message's data.
func eventIDOf(raw []byte) string {
	var m struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Data.ID
}

func benchSustainedPipeline(b *testing.B, fsync bool) {
	m := metrics.New()
	e := runtimetest.Start(b, runtimetest.Options{Partitions: 16, BusOpts: []bustest.Option{bustest.WithSyncAlways(fsync)},
		PipelineOpts: []deliver.PipelineOption{deliver.WithMetrics(m)}})
	var recs []*sentinel.Sentinel
	for i := 0; i < sustainedFlows; i++ {
		recs = append(recs, e.Watch(sentinel.WatchRequest{SessionID: fmt.Sprintf("bench%d", i), Subject: fmt.Sprintf("github:acme/r%d#1", i), Types: []string{"*"}, Provider: "fake"}))
	}
	l := newLanding(b.N)
	sub, err := e.Bus.NC.Subscribe(inbox.AllSubjects, func(m *nats.Msg) { l.landed(eventIDOf(m.Data)) })
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		f := i % sustainedFlows
		ev := runtimetest.Event(fmt.Sprintf("evt_%09d", i), "github.check_suite.completed", fmt.Sprintf("github:acme/r%d#1", f), false)
		l.begin(ev.ID)
		if _, err := e.Publisher.Publish(ctx, recs[f].ID, []sentinel.Event{ev}, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	l.wait(b)
	elapsed := time.Since(start)
	b.StopTimer()
	reportSustained(b, l.lat, elapsed)
	// The share of deliveries with another event of their partition behind
	// them: what a partition batch (issue 28, lever 1) could take together.
	if bk := m.DeliveryBacklog(); bk.Received > 0 {
		b.ReportMetric(float64(bk.Backlogged)/float64(bk.Received), "backlogged-share")
	}
}

func benchSustainedRaw(b *testing.B, fsync bool) {
	env := bustest.Start(b, bustest.WithSyncAlways(fsync))
	ctx := context.Background()
	js := env.JS
	in, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "RAW_IN", Subjects: []string{"raw.in.>"}, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "RAW_OUT", Subjects: []string{"raw.out.>"}, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
		b.Fatal(err)
	}
	l := newLanding(b.N)
	sub, err := env.NC.Subscribe("raw.out.>", func(m *nats.Msg) { l.landed(eventIDOf(m.Data)) })
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	for f := 0; f < sustainedFlows; f++ {
		cons, err := in.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: fmt.Sprintf("raw%d", f), FilterSubject: fmt.Sprintf("raw.in.%d", f), AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer relayRaw(ctx, js, cons)()
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		f := i % sustainedFlows
		ev := runtimetest.Event(fmt.Sprintf("evt_%09d", i), "github.check_suite.completed", fmt.Sprintf("github:acme/r%d#1", f), false)
		raw, _ := json.Marshal(ev)
		l.begin(ev.ID)
		if _, err := js.Publish(ctx, fmt.Sprintf("raw.in.%d", f), raw, jetstream.WithMsgID(bus.EventMsgID(fmt.Sprint(f), ev.ID))); err != nil {
			b.Fatal(err)
		}
	}
	l.wait(b)
	elapsed := time.Since(start)
	b.StopTimer()
	reportSustained(b, l.lat, elapsed)
}

func reportSustained(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "events/s")
	reportLatency(b, lat)
}

package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// BenchmarkPipeline measures one event from publish to its inbox message
// (publish with PubAck -> partition consumer -> per-event pipeline -> inbox
// message stored -> ack), one at a time, beside a raw JetStream baseline
// doing the same transport work (sync publish, pull-consume, publish the
// same payload to a second stream, ack), at both fsync settings.
//
//	go test -run '^$' -bench 'Pipeline' -benchtime 2000x ./runtime/deliver/
func BenchmarkPipeline(b *testing.B) {
	for _, fsync := range []bool{true, false} {
		name := "fsync=always"
		if !fsync {
			name = "fsync=default"
		}
		b.Run(name+"/pipeline", func(b *testing.B) { benchPipeline(b, fsync) })
		b.Run(name+"/raw-jetstream", func(b *testing.B) { benchRaw(b, fsync) })
	}
}

func benchEvent(i int) sentinel.Event {
	return runtimetest.Event(fmt.Sprintf("evt_%09d", i), "github.check_suite.completed", pr, false)
}

func benchPipeline(b *testing.B, fsync bool) {
	e := runtimetest.Start(b, runtimetest.Options{Partitions: 16, BusOpts: []bustest.Option{bustest.WithSyncAlways(fsync)}})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "bench", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	landed := make(chan struct{}, 1)
	unsub, err := e.Inbox.Subscribe("bench", func() {
		select {
		case landed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer unsub()
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := e.Publisher.Publish(ctx, rec.ID, []sentinel.Event{benchEvent(i)}, "bench"); err != nil {
			b.Fatal(err)
		}
		select {
		case <-landed:
		case <-time.After(10 * time.Second):
			b.Fatal("inbox message did not land")
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	report(b, lat)
}

func benchRaw(b *testing.B, fsync bool) {
	env := bustest.Start(b, bustest.WithSyncAlways(fsync))
	ctx := context.Background()
	js := env.JS
	mk := func(name, subj string) jetstream.Stream {
		s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subj}, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	in := mk("RAW_IN", "raw.in.>")
	mk("RAW_OUT", "raw.out.>")
	cons, err := in.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "raw", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1})
	if err != nil {
		b.Fatal(err)
	}
	landed := make(chan struct{}, 1)
	sub, err := env.NC.Subscribe("raw.out.>", func(*nats.Msg) {
		select {
		case landed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	stop := relayRaw(ctx, js, cons)
	defer stop()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev := benchEvent(i)
		raw, _ := json.Marshal(ev)
		start := time.Now()
		if _, err := js.Publish(ctx, "raw.in.x", raw, jetstream.WithMsgID(bus.EventMsgID("sen_x", ev.ID))); err != nil {
			b.Fatal(err)
		}
		select {
		case <-landed:
		case <-time.After(10 * time.Second):
			b.Fatal("raw message did not land")
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	report(b, lat)
}

// report records the one-at-a-time rate (events over the sum of their
// latencies) and the latency percentiles.
// relayRaw is the raw baseline's consumer: with the pull discipline of the
// delivery workers (one fresh Fetch(1) at a time; a long-lived pull
// iterator can lose its request) it builds the inbox message of each event,
// publishes it to raw.out and acks. The returned function stops it.
func relayRaw(ctx context.Context, js jetstream.JetStream, cons jetstream.Consumer) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
			}
			fctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
			if err != nil {
				cancel()
				continue
			}
			for m := range batch.Messages() {
				ev := sentinel.Event{}
				_ = json.Unmarshal(m.Data(), &ev)
				msg := inbox.SentinelMessage("sen_x", "fake", "bench", sentinel.UrgencyNextTurn, &ev, "2026-11-01T10:00:00.000Z")
				raw, _ := json.Marshal(msg)
				if _, err := js.Publish(ctx, "raw.out."+msg.ID, raw, jetstream.WithMsgID(msg.ID)); err != nil {
					_ = m.Nak()
					continue
				}
				_ = m.Ack()
			}
			cancel()
		}
	}()
	return func() { close(done); <-stopped }
}

func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.ReportMetric(float64(len(lat))/sum.Seconds(), "events/s")
	reportLatency(b, lat)
}

// reportLatency records p50 and p99 in milliseconds.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}

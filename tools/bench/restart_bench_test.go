package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// BenchmarkRestart restarts an in-process node (fsync always) on a home
// holding 100,000 fake sentinels and times each start to /readyz 200, for
// CPU profiles of a restart (the scale phase's restartToReadyMs, without
// the process start):
//
//	go test -run '^$' -bench Restart -benchtime 3x -cpuprofile cpu.out ./tools/bench/
//	go tool pprof -top -tagfocus phase=restart cpu.out
//
// The records are written straight into the records bucket (fsync off,
// as the scale phase's creates would leave them), so filling the home
// takes seconds instead of the minutes 100,000 creates over HTTP take.
func BenchmarkRestart(b *testing.B) {
	const count = 100000
	ctx := context.Background()
	home := b.TempDir()
	n, err := startInProcess(ctx, home, false, 0)
	if err != nil {
		b.Fatal(err)
	}
	js, err := n.js()
	if err != nil {
		b.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, sentinels.BucketRecords)
	if err != nil {
		b.Fatal(err)
	}
	if err := fillRecords(ctx, kv, count); err != nil {
		b.Fatal(err)
	}
	if err := n.stop(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		// The label marks the restart's samples, the goroutines it starts
		// included, apart from the fill's.
		pprof.Do(ctx, pprof.Labels("phase", "restart"), func(ctx context.Context) {
			n, err = startInProcess(ctx, home, true, 0)
			if err == nil {
				err = waitReady(ctx, n)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := n.stop(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// fillRecords writes count fake-provider sentinel records, as the
// scale phase's creates store them, 64 writes in flight.
func fillRecords(ctx context.Context, kv jetstream.KeyValue, count int) error {
	sem := make(chan error, 64)
	for i := range count {
		if i >= cap(sem) {
			if err := <-sem; err != nil {
				return err
			}
		}
		id := sentinel.NewSentinelID()
		subject := "github:bench/scale#" + strconv.Itoa(i+1)
		raw, err := json.Marshal(&sentinel.Sentinel{ID: id, Provider: "fake", Status: sentinel.StatusActive, CreatedTs: time.Now().UnixMilli(), ClosedSubjects: []string{},
			Spec: sentinel.Spec{Match: []sentinel.Clause{{Subject: subject, Types: []string{"*"}}}, Until: sentinel.Until{Kind: "never"},
				Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "bench-scale-" + strconv.Itoa(i%100), Urgency: sentinel.UrgencyNextTurn}, Provider: "fake"},
			Handle: sentinel.Handle{Provider: "fake", RemoteID: "fake-" + id, Cursor: "0", State: map[string]any{"hookKey": FakeHookKey(id), "subjects": []string{subject}}}})
		if err != nil {
			return err
		}
		go func() { _, err := kv.Create(ctx, id, raw); sem <- err }()
	}
	for range min(count, cap(sem)) {
		if err := <-sem; err != nil {
			return err
		}
	}
	return nil
}

// waitReady waits for n's /readyz to answer 200.
func waitReady(ctx context.Context, n *node) error {
	for {
		resp, err := n.http.Get(n.url + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

package sentinels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// BenchmarkCreateWall measures what bounds sentinel creates, side by
// side on an embedded server with fsync always and one with fsync off:
//
//   - store: the node's record store (sentinels.Store.Create, the one
//     durable write of a create);
//   - raw-1-bucket: a raw KV create of the same bytes into a bucket of
//     the records bucket's config;
//   - raw-4-buckets: the same creates spread over four such buckets
//     (what sharding the records would give);
//   - atomic-batch-16 and -64: the creates of one bucket grouped into
//     atomic batches (nats-server 2.12+, AllowAtomicPublish), whose
//     commit syncs once for the whole batch (issue 28's lever 2).
//
// Each runs with 1 and with 16 concurrent writers and reports creates/s:
//
//	go test -run '^$' -bench CreateWall -benchtime 4800x -count 5 ./runtime/sentinels/
//
// nats-server writes every message of a stream under the stream's lock
// and, with fsync always, syncs it before the next, so concurrent
// creates into one bucket cannot share a flush (BENCHMARKS.md, "What
// stands in the way").
func BenchmarkCreateWall(b *testing.B) {
	for _, fsync := range []bool{true, false} {
		name := "fsync=always"
		if !fsync {
			name = "fsync=off"
		}
		b.Run(name, func(b *testing.B) { benchmarkCreates(b, fsync) })
	}
}

func benchmarkCreates(b *testing.B, fsync bool) {
	env := bustest.Start(b, bustest.WithSyncAlways(fsync))
	ctx := context.Background()
	bucket := func(name string) jetstream.KeyValue {
		cfg := sentinels.RecordsBucket()
		cfg.Bucket = name
		kv, err := env.JS.CreateOrUpdateKeyValue(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return kv
	}
	rec := func() *sentinel.Sentinel {
		return &sentinel.Sentinel{ID: sentinel.NewSentinelID(), Status: sentinel.StatusActive, Provider: "fake", CreatedTs: time.Now().UnixMilli(),
			Spec:   sentinel.Spec{Match: []sentinel.Clause{{Subject: "github:bench/scale#1", Types: []string{"*"}}}, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "bench-scale-1"}},
			Handle: sentinel.Handle{State: map[string]any{"hookKey": "fk-x", "subjects": []string{"github:bench/scale#1"}}}}
	}
	raw, err := json.Marshal(rec())
	if err != nil {
		b.Fatal(err)
	}
	var keys atomic.Int64
	key := func() string { return "k" + strconv.FormatInt(keys.Add(1), 10) }
	type path struct {
		name  string
		batch int
		write func(n int) error // n creates, one batch
	}
	paths := []path{
		{"store", 1, func() func(int) error {
			store := sentinels.NewStore(bucket("bench_store"))
			return func(int) error { return store.Create(ctx, rec()) }
		}()},
		{"raw-1-bucket", 1, func() func(int) error {
			kv := bucket("bench_raw")
			return func(int) error { _, err := kv.Create(ctx, key(), raw); return err }
		}()},
		{"raw-4-buckets", 1, func() func(int) error {
			kvs := []jetstream.KeyValue{bucket("bench_shard0"), bucket("bench_shard1"), bucket("bench_shard2"), bucket("bench_shard3")}
			var i atomic.Int64
			return func(int) error { _, err := kvs[i.Add(1)%4].Create(ctx, key(), raw); return err }
		}()},
	}
	atomicBatch := atomicBatchCreates(b, env, bucket("bench_batch"), key, raw)
	paths = append(paths, path{"atomic-batch-16", 16, atomicBatch}, path{"atomic-batch-64", 64, atomicBatch})
	for _, writers := range []int{1, 16} {
		for _, p := range paths {
			b.Run(p.name+"/writers="+strconv.Itoa(writers), func(b *testing.B) {
				var claimed atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, writers)
				b.ResetTimer()
				start := time.Now()
				for range writers {
					wg.Go(func() {
						for {
							end := claimed.Add(int64(p.batch))
							n := p.batch - int(max(0, end-int64(b.N)))
							if n <= 0 {
								return
							}
							if err := p.write(n); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
			})
		}
	}
}

// atomicBatchCreates returns a writer of n KV creates into kv as one
// atomic batch (the batch headers written by hand: nats.go has only the
// stream's AllowAtomicPublish field), after turning atomic publishes on
// for the bucket's stream.
func atomicBatchCreates(b *testing.B, env *bustest.Env, kv jetstream.KeyValue, key func() string, raw []byte) func(n int) error {
	ctx := context.Background()
	stream := "KV_" + kv.Bucket()
	s, err := env.JS.Stream(ctx, stream)
	if err != nil {
		b.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.AllowAtomicPublish = true
	if _, err := env.JS.UpdateStream(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	var batches atomic.Int64
	return func(n int) error {
		id := "b" + strconv.FormatInt(batches.Add(1), 10)
		for i := 1; i <= n; i++ {
			m := nats.NewMsg("$KV." + kv.Bucket() + "." + key())
			m.Data = raw
			m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, "0")
			m.Header.Set("Nats-Batch-Id", id)
			m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i))
			if i < n {
				if err := env.NC.PublishMsg(m); err != nil {
					return err
				}
				continue
			}
			m.Header.Set("Nats-Batch-Commit", "1")
			ack, err := env.NC.RequestMsg(m, 10*time.Second)
			if err != nil {
				return err
			}
			if !bytes.Contains(ack.Data, []byte(`"count":`+strconv.Itoa(n))) {
				return fmt.Errorf("batch %s: %s", id, ack.Data)
			}
		}
		return nil
	}
}

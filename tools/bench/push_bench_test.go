package bench

import (
	"context"
	"strconv"
	"testing"
)

// BenchmarkPushPath sends b.N events one at a time through the node's
// push path (signed POST, ingress, publish, partition consumer, pipeline,
// inbox) on an in-process node with fsync off, for CPU profiles:
//
//	go test -run '^$' -bench PushPath -benchtime 3000x -cpuprofile cpu.out ./tools/bench/
//	go tool pprof -top -cum cpu.out
//
// The figures themselves come from `sentinel bench`.
func BenchmarkPushPath(b *testing.B) {
	for _, path := range []string{"node", "relay"} {
		b.Run(path, func(b *testing.B) {
			ctx := context.Background()
			n, err := startInProcess(ctx, b.TempDir(), false, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = n.stop(context.Background()) }()
			var send func(ctx context.Context, w int, id string) error
			if path == "node" {
				prov, _ := n.app.Registry.Get("fake")
				p, err := newPushPath(ctx, n, prov.(signer), 1)
				if err != nil {
					b.Fatal(err)
				}
				defer p.close()
				send = p.send
			} else {
				r, err := newRelayPath(ctx, n, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer r.close()
				send = r.send
			}
			for i := range 100 {
				if err := send(ctx, 0, "warm-"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := range b.N {
				if err := send(ctx, 0, "ev-"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreatePath creates b.N fake sentinels through POST /sentinels
// with 4 clients (the scale phase's default) on an in-process node with
// fsync always, for CPU and block profiles of a create:
//
//	go test -run '^$' -bench CreatePath -benchtime 5000x -cpuprofile cpu.out ./tools/bench/
//
// The figures themselves come from `sentinel bench` (createsPerSec).
func BenchmarkCreatePath(b *testing.B) {
	ctx := context.Background()
	n, err := startInProcess(ctx, b.TempDir(), true, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = n.stop(context.Background()) }()
	if err := createSentinels(ctx, 100, 4, func(int) *node { return n }); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := createSentinelsFrom(ctx, 1000, b.N, 4, func(int) *node { return n }); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "creates/s")
}

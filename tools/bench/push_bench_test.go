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

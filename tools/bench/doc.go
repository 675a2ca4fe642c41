// Package bench is the benchmark harness behind `sentinel bench`. In one
// run it measures, on nodes it starts itself on temporary homes with the
// test-only fake provider enabled:
//
//   - the push path: a signed POST /inbound/sentinel-<hookKey> until the
//     inbox message is stored (HTTP ingress, signature check, publish with
//     PubAck, partition consumer, pipeline, inbox append), throughput and
//     latency beside two baselines on the same server in the same run: a
//     raw JetStream chain (publish with PubAck, pull-consume, publish to a
//     second stream, ack) and a hand-rolled HTTP relay (net/http handler,
//     HMAC check, publish with PubAck, the same consumer), at one or both
//     fsync settings;
//   - the poll path: the node's share of a quiet poll (one POST
//     /sentinels/poll tick over many quiet fake sentinels: wall and node
//     CPU per sentinel) and, when the source tree, the go tool and gh are
//     at hand, the local-gh provider's own quiet-PR poll cost from the Go
//     benchmark BenchmarkQuietPoll (conditional requests against the fake
//     GitHub);
//   - scale: N (10,000 by default) sentinels on one node: creation rate,
//     RSS after creating them, GET /sentinels latency, restart-to-ready
//     time and RSS after the restart;
//   - cluster (Options.Cluster >= 3): that many `sentinel serve` processes
//     of the binary clustered on loopback (every stream R3): the push path
//     round-robin over the nodes beside raw JetStream R3 on the same
//     servers, then failover, SIGKILL of the events stream's leader timed
//     to the next push a surviving node accepts (median and max).
//
// The push path runs in-process (runtime/app), so arrival is observed on
// the inbox subject without an extra HTTP hop. The scale phase runs the
// sentinel binary when Options.Binary is set (so RSS and CPU are the
// node's alone) and in-process otherwise. The cluster phase always runs
// the binary (it SIGKILLs nodes) and observes arrival on the inbox subject
// over its own NATS client connection to the nodes' client listeners.
package bench

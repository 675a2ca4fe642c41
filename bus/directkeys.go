package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// directBatch is how many messages one batched direct get asks for.
const directBatch = 256

// ListKeys returns the live keys of kv. It lists them as nats.go does
// (an ordered consumer), and when that fails (a node cut off from its
// cluster's quorum cannot create a consumer: "JetStream system
// temporarily unavailable") it walks the bucket's stream with batched
// direct gets instead, which the replica this node holds answers
// (docs/cluster.md, "Cut off from quorum": reads are served from the
// records a node holds, possibly stale). The keys come sorted.
func (b *Bus) ListKeys(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
	keys, err := listKeys(ctx, kv)
	if err == nil {
		return keys, nil
	}
	direct, derr := DirectKeys(ctx, b.nc, kv.Bucket())
	if derr != nil {
		return nil, fmt.Errorf("bus: list keys of %s: %w (direct: %v)", kv.Bucket(), err, derr)
	}
	return direct, nil
}

func listKeys(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
	lister, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}

// DirectKeys lists the live keys of a KV bucket through batched direct
// gets ($JS.API.DIRECT.GET.KV_<bucket>, next_for "$KV.<bucket>.>"),
// without a consumer, so it needs no meta leader: any replica of the
// bucket answers (the local one first). A key whose last entry is a delete
// or purge marker is left out. The keys come sorted.
func DirectKeys(ctx context.Context, nc *nats.Conn, bucket string) ([]string, error) {
	prefix := "$KV." + bucket + "."
	last := map[string]bool{} // key -> live at its latest entry
	seq := uint64(1)
	for {
		n, next, done, err := directPage(ctx, nc, KVStream(bucket), prefix, seq, last)
		if err != nil {
			return nil, fmt.Errorf("bus: direct keys of %s: %w", bucket, err)
		}
		if done || n == 0 {
			break
		}
		seq = next
	}
	keys := make([]string, 0, len(last))
	for k, live := range last {
		if live {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// directPage asks for one batch from seq on and records each entry's key
// in last. It returns how many entries came, the sequence after the last
// one, and whether the stream holds nothing more.
func directPage(ctx context.Context, nc *nats.Conn, stream, prefix string, seq uint64, last map[string]bool) (int, uint64, bool, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	inbox := nc.NewInbox()
	ch := make(chan *nats.Msg, directBatch+8)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return 0, 0, false, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	req, _ := json.Marshal(map[string]any{"seq": seq, "next_for": prefix + ">", "batch": directBatch})
	if err := nc.PublishRequest("$JS.API.DIRECT.GET."+stream, inbox, req); err != nil {
		return 0, 0, false, err
	}
	n, next := 0, seq
	for {
		var m *nats.Msg
		select {
		case <-ctx.Done():
			return 0, 0, false, ctx.Err()
		case m = <-ch:
		}
		if status := m.Header.Get("Status"); status != "" {
			switch status {
			case "204": // end of the batch
				pending, _ := strconv.ParseUint(m.Header.Get("Nats-Num-Pending"), 10, 64)
				return n, next, pending == 0, nil
			case "404": // nothing from seq on
				return n, next, true, nil
			default:
				return 0, 0, false, fmt.Errorf("direct get: %s %s", status, m.Header.Get("Description"))
			}
		}
		subj := m.Header.Get(jetstream.SubjectHeader)
		s, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil || !strings.HasPrefix(subj, prefix) {
			return 0, 0, false, fmt.Errorf("direct get: malformed answer (subject %q, sequence %q)", subj, m.Header.Get(jetstream.SequenceHeader))
		}
		op := m.Header.Get("KV-Operation")
		last[strings.TrimPrefix(subj, prefix)] = op != "DEL" && op != "PURGE"
		n++
		next = s + 1
	}
}

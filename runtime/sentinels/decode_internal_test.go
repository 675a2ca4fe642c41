package sentinels

import (
	"encoding/json"
	"runtime"
	"strconv"
	"testing"

	"github.com/agentproto/sentinel"
)

// benchRecordJSON returns the stored form of the i-th record of the scale
// benchmark's shape (a fake-provider sentinel on one PR subject).
func benchRecordJSON(tb testing.TB, i int) []byte {
	tb.Helper()
	id := sentinel.NewSentinelID()
	subject := "github:bench/scale#" + strconv.Itoa(i)
	rec := &sentinel.Sentinel{ID: id, Provider: "fake", Status: sentinel.StatusActive, CreatedTs: int64(1_700_000_000_000 + i),
		Spec: sentinel.Spec{Match: []sentinel.Clause{{Subject: subject, Types: []string{"*"}}}, Provider: "fake",
			Until:  sentinel.Until{Kind: sentinel.UntilNever},
			Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "bench-scale-" + strconv.Itoa(i%100)}},
		Handle: sentinel.Handle{Provider: "fake", RemoteID: "fake-" + id, Cursor: "0",
			State: map[string]any{"hookKey": "fk-" + id, "subjects": []any{subject}}},
		ClosedSubjects: []string{}}
	raw, err := json.Marshal(rec)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// BenchmarkDecodeMirror decodes 100,000 stored records as the mirror's
// start-up load does and reports the heap the decoded records keep
// (bytes/record) beside the time per record.
func BenchmarkDecodeMirror(b *testing.B) {
	const n = 100000
	raws := make([][]byte, n)
	for i := range raws {
		raws[i] = benchRecordJSON(b, i)
	}
	var kept uint64
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		recs := make([]*sentinel.Sentinel, n)
		for i, raw := range raws {
			rec, err := decode(raw)
			if err != nil {
				b.Fatal(err)
			}
			recs[i] = rec
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(recs)
	}
	b.ReportMetric(float64(kept)/n, "B/record")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}

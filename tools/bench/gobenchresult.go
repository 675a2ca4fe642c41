package bench

// Module is the module path whose source tree the Go benchmarks need.
const Module = "github.com/agentproto/sentinel"

// QuietPollBench is the Go benchmark of local-gh's own quiet-PR poll (five
// conditional GETs that all answer 304, against the fake GitHub).
const QuietPollBench = "BenchmarkQuietPoll/localgh-inprocess"

// GoBenchResult is one parsed Go benchmark line.
type GoBenchResult struct {
	Name string `json:"name"`
	// Skipped says why the benchmark did not run ("" when it ran).
	Skipped string `json:"skipped,omitempty"`
	Command string `json:"command"`
	N       int64  `json:"n,omitempty"`
	// Metrics maps a unit (ns/op, cpu-ns/poll, quota/poll, ...) to its
	// value.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

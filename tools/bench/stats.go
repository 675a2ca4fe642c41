package bench

import (
	"sort"
	"time"
)

// Latency summarizes a sample of durations, in milliseconds.
type Latency struct {
	N      int     `json:"n"`
	MeanMs float64 `json:"meanMs"`
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
}

// summarize sorts lat in place and returns its summary (nearest-rank
// percentiles).
func summarize(lat []time.Duration) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	q := func(p float64) float64 {
		i := int(p*float64(len(lat))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(lat) {
			i = len(lat) - 1
		}
		return ms(lat[i])
	}
	return Latency{N: len(lat), MeanMs: ms(sum / time.Duration(len(lat))), P50Ms: q(0.50), P90Ms: q(0.90), P99Ms: q(0.99), MaxMs: ms(lat[len(lat)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// ScaleResult is N sentinels on one node.
type ScaleResult struct {
	Sentinels int `json:"sentinels"`
	// Mode is "binary" (RSS and CPU are the node process alone) or
	// "in-process" (they include the harness).
	Mode  string `json:"mode"`
	Fsync string `json:"fsync"`
	// RSSBaseMiB is the node's RSS when ready and empty.
	RSSBaseMiB float64 `json:"rssBaseMiB"`
	// CreatesPerSec is POST /sentinels throughput (CreateConcurrency
	// clients); CreatePerSec is the same figure under the name of the
	// reports before issue 28.
	CreatesPerSec     float64 `json:"createsPerSec"`
	CreatePerSec      float64 `json:"createPerSec"`
	CreateConcurrency int     `json:"createConcurrency"`
	// RSSAfterCreateMiB is the RSS once every sentinel exists.
	RSSAfterCreateMiB float64 `json:"rssAfterCreateMiB"`
	// List is GET /sentinels (every sentinel in one answer).
	List      Latency `json:"list"`
	ListBytes int     `json:"listBytes"`
	// ListPage is GET /sentinels?limit=100 walking the pages (after=next,
	// from the start again past the last).
	ListPage Latency `json:"listPage"`
	// QuietTick is one POST /sentinels/poll over every quiet sentinel.
	QuietTick TickCost `json:"quietTick"`
	// StopMs is the clean stop (SIGTERM to exit).
	StopMs float64 `json:"stopMs"`
	// RestartToReadyMs is start to /readyz 200 on the populated home
	// (process start, JetStream recovery, re-attach of every sentinel).
	RestartToReadyMs float64 `json:"restartToReadyMs"`
	// RSSAfterRestartMiB is the RSS when ready again.
	RSSAfterRestartMiB float64 `json:"rssAfterRestartMiB"`
}

// TickCost is the cost of poll ticks over quiet sentinels (the fake
// provider answers from memory, so this is the node's share: listing
// records, scheduling, the provider call, no write).
type TickCost struct {
	Ticks int `json:"ticks"`
	// WallMs is the median tick's wall time.
	WallMs float64 `json:"wallMs"`
	// CPUMs is the mean tick's node CPU time (user+system).
	CPUMs float64 `json:"cpuMs"`
	// PerSentinelUs are WallMs and CPUMs divided by the sentinel count.
	WallPerSentinelUs float64 `json:"wallPerSentinelUs"`
	CPUPerSentinelUs  float64 `json:"cpuPerSentinelUs"`
}

// runScale creates o.Sentinels sentinels on a fresh node, then measures
// memory, list latency, a quiet tick and a restart.
func runScale(ctx context.Context, home string, o Options, progress func(string, ...any)) (ScaleResult, error) {
	res := ScaleResult{Sentinels: o.Sentinels, Fsync: fsyncName(o.scaleFsync()), CreateConcurrency: o.CreateConcurrency}
	start := func() (*node, error) {
		if o.Binary != "" {
			return startBinary(ctx, o.Binary, home, o.scaleFsync())
		}
		return startInProcess(ctx, home, o.scaleFsync(), 0)
	}
	res.Mode = "in-process"
	if o.Binary != "" {
		res.Mode = "binary"
	}
	n, err := start()
	if err != nil {
		return res, err
	}
	defer func() { _ = n.stop(context.Background()) }()
	res.RSSBaseMiB = rssMiB(n.pid())

	progress("scale: creating %d sentinels (%d clients)", o.Sentinels, o.CreateConcurrency)
	t0 := time.Now()
	if err := createSentinels(ctx, o.Sentinels, o.CreateConcurrency, func(int) *node { return n }); err != nil {
		return res, err
	}
	res.CreatesPerSec = float64(o.Sentinels) / time.Since(t0).Seconds()
	res.CreatePerSec = res.CreatesPerSec
	res.RSSAfterCreateMiB = rssMiB(n.pid())

	// A full listing of many sentinels is tens of MiB: past bigList a few
	// requests give its latency.
	fullLists := o.ListRequests
	if o.Sentinels > bigList {
		fullLists = min(fullLists, 10)
	}
	progress("scale: %d x GET /sentinels, %d x GET /sentinels?limit=%d", fullLists, o.ListRequests, pageSize)
	if res.ListPage, err = pageRequests(ctx, n, o.ListRequests); err != nil {
		return res, err
	}
	lat := make([]time.Duration, 0, fullLists)
	for i := 0; i < fullLists; i++ {
		var out struct {
			Sentinels []struct {
				ID string `json:"id"`
			} `json:"sentinels"`
		}
		t := time.Now()
		if _, err := n.call(ctx, http.MethodGet, "/sentinels", nil, &out); err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t))
		if i == 0 && len(out.Sentinels) != o.Sentinels {
			return res, fmt.Errorf("GET /sentinels listed %d sentinels, want %d", len(out.Sentinels), o.Sentinels)
		}
	}
	res.List = summarize(lat)
	res.ListBytes = listBytes(ctx, n)

	progress("scale: %d quiet poll ticks over %d sentinels", o.Ticks, o.Sentinels)
	if res.QuietTick, err = quietTicks(ctx, n, o.Ticks, o.Sentinels); err != nil {
		return res, err
	}

	progress("scale: restart")
	t0 = time.Now()
	if err := n.stop(ctx); err != nil {
		return res, fmt.Errorf("stop: %w", err)
	}
	res.StopMs = ms(time.Since(t0))
	t0 = time.Now()
	n, err = start()
	if err != nil {
		return res, fmt.Errorf("restart: %w", err)
	}
	res.RestartToReadyMs = ms(time.Since(t0))
	res.RSSAfterRestartMiB = rssMiB(n.pid())
	var out struct {
		Sentinels []struct {
			ID string `json:"id"`
		} `json:"sentinels"`
	}
	if _, err := n.call(ctx, http.MethodGet, "/sentinels", nil, &out); err != nil {
		return res, err
	}
	if len(out.Sentinels) != o.Sentinels {
		return res, fmt.Errorf("after the restart GET /sentinels listed %d sentinels, want %d", len(out.Sentinels), o.Sentinels)
	}
	return res, nil
}

// quietTicks runs ticks POST /sentinels/poll calls (each a full tick over
// every sentinel) and returns the median wall time and the mean CPU time
// (the CPU clock of a child process ticks in 10 ms steps, so it is read
// once around all ticks).
func quietTicks(ctx context.Context, n *node, ticks, sentinels int) (TickCost, error) {
	var walls []time.Duration
	c0 := cpuTime(n.pid())
	for range ticks {
		t0 := time.Now()
		if _, err := n.call(ctx, http.MethodPost, "/sentinels/poll", nil, nil); err != nil {
			return TickCost{}, err
		}
		walls = append(walls, time.Since(t0))
	}
	cpu := cpuTime(n.pid()) - c0
	tc := TickCost{Ticks: ticks, WallMs: summarize(walls).P50Ms, CPUMs: ms(cpu / time.Duration(ticks))}
	if sentinels > 0 {
		tc.WallPerSentinelUs = tc.WallMs * 1000 / float64(sentinels)
		tc.CPUPerSentinelUs = tc.CPUMs * 1000 / float64(sentinels)
	}
	return tc, nil
}

// bigList is the sentinel count past which the full listing is timed by
// ten requests only; pageSize is the page the paged listing asks for.
const (
	bigList  = 20000
	pageSize = 100
)

// pageRequests times count GET /sentinels?limit=pageSize requests, each
// continuing after the previous page (from the start again after the
// last).
func pageRequests(ctx context.Context, n *node, count int) (Latency, error) {
	lat := make([]time.Duration, 0, count)
	after := ""
	for range count {
		path := "/sentinels?limit=" + strconv.Itoa(pageSize)
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		var out struct {
			Sentinels []json.RawMessage `json:"sentinels"`
			Next      string            `json:"next"`
		}
		t := time.Now()
		if _, err := n.call(ctx, http.MethodGet, path, nil, &out); err != nil {
			return Latency{}, err
		}
		lat = append(lat, time.Since(t))
		if len(out.Sentinels) > pageSize {
			return Latency{}, fmt.Errorf("GET %s answered %d sentinels", path, len(out.Sentinels))
		}
		after = out.Next
	}
	return summarize(lat), nil
}

// listBytes returns the size of one GET /sentinels answer.
func listBytes(ctx context.Context, n *node) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+"/sentinels", nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+n.token)
	resp, err := n.http.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	nb, _ := io.Copy(io.Discard, resp.Body)
	return int(nb)
}

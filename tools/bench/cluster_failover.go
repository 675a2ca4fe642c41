package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/agentproto/sentinel/bus"
)

// FailoverResult is Kills SIGKILLs of the node leading the events stream:
// the time from the signal to the next push a surviving node accepted.
type FailoverResult struct {
	Kills    int              `json:"kills"`
	MedianMs float64          `json:"medianMs"`
	MaxMs    float64          `json:"maxMs"`
	Samples  []FailoverSample `json:"samples"`
}

// FailoverSample is one kill.
type FailoverSample struct {
	// Killed is the node that led the events stream (bus.StreamEvents) and was SIGKILLed.
	Killed string `json:"killed"`
	// Ms is SIGKILL to the first push answered 200, by AcceptedBy.
	Ms         float64 `json:"ms"`
	AcceptedBy string  `json:"acceptedBy"`
	// Probes is the pushes sent until then (one every probeInterval, each
	// to the next node in turn); Refused had no answer (connection error),
	// Unavailable were answered 503, Failed any other non-200 answer.
	Probes      int `json:"probes"`
	Refused     int `json:"refused"`
	Unavailable int `json:"unavailable"`
	Failed      int `json:"failed"`
	// Codes counts the error codes of the answers other than 200
	// (cluster_unavailable, unavailable, persist_failed...).
	Codes map[string]int `json:"codes,omitempty"`
	// NewLeader leads the events stream once the cluster is healthy
	// again; RestartToReadyMs is the killed node's restart to /readyz 200.
	NewLeader        string  `json:"newLeader"`
	RestartToReadyMs float64 `json:"restartToReadyMs"`
}

const (
	// probeInterval spaces the failover probes: a steady 10 pushes/s
	// spread over the nodes, as a load balancer would send them.
	probeInterval = 100 * time.Millisecond
	// maxProbesInFlight caps the probes waiting at once (a node retries
	// an event publish through an election for up to bus.publish_retry).
	maxProbesInFlight = 32
	// probeTimeout bounds one probe request.
	probeTimeout = 30 * time.Second
	// failoverTimeout bounds the wait for an accepted push after a kill.
	failoverTimeout = time.Minute
)

// runFailover kills the events stream's leader o.Kills times, each time
// timing the next accepted push, then restarting the node and waiting
// until the cluster is healthy again.
func runFailover(ctx context.Context, c *clusterNodes, o Options) (FailoverResult, error) {
	res := FailoverResult{Kills: o.Kills}
	// One sentinel of its own on node 1: its events are never awaited.
	_, key, err := c.nodes[0].watch(ctx, "github:bench/failover#1", "bench-failover")
	if err != nil {
		return res, fmt.Errorf("create the failover sentinel: %w", err)
	}
	for k := range o.Kills {
		leader, err := c.waitHealthy(ctx)
		if err != nil {
			return res, err
		}
		i := c.index(leader)
		if i < 0 {
			return res, fmt.Errorf("the %s leader %q is not one of the bench's nodes", bus.StreamEvents, leader)
		}
		o.Progress("cluster: failover %d/%d: SIGKILL %s (leads %s)", k+1, o.Kills, leader, bus.StreamEvents)
		t0 := c.kill(i)
		s, err := probeUntilAccepted(ctx, c, key, t0, k)
		s.Killed = leader
		if err != nil {
			return res, fmt.Errorf("after SIGKILL of %s: %w", leader, err)
		}
		o.Progress("cluster: failover %d/%d: push accepted by %s %.0f ms after the kill (%d probes: %d refused, %d 503, %d other)",
			k+1, o.Kills, s.AcceptedBy, s.Ms, s.Probes, s.Refused, s.Unavailable, s.Failed)
		r0 := time.Now()
		if err := c.start(ctx, i); err != nil {
			return res, fmt.Errorf("restart %s: %w", leader, err)
		}
		s.RestartToReadyMs = ms(time.Since(r0))
		if s.NewLeader, err = c.waitHealthy(ctx); err != nil {
			return res, err
		}
		res.Samples = append(res.Samples, s)
	}
	var all []float64
	for _, s := range res.Samples {
		all = append(all, s.Ms)
	}
	res.MedianMs, res.MaxMs = median(all), maxOf(all)
	return res, nil
}

// probeUntilAccepted sends a signed push every probeInterval from t0, each
// to the next node in turn (the killed one included: a load balancer does
// not know yet), until one is answered 200, and returns when and by whom.
func probeUntilAccepted(ctx context.Context, c *clusterNodes, key string, t0 time.Time, round int) (FailoverSample, error) {
	var s FailoverSample
	ctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	urls := append([]string(nil), c.urls...)
	type answer struct {
		node   int
		status int
		code   string
		err    error
		at     time.Time
	}
	answers := make(chan answer, maxProbesInFlight)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	inFlight, next := 0, 0
	probe := func() {
		if inFlight >= maxProbesInFlight {
			return
		}
		i := next % len(urls)
		id := "failover-" + strconv.Itoa(round) + "-" + strconv.Itoa(next)
		next++
		inFlight++
		s.Probes++
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
			defer pcancel()
			body, err := json.Marshal(benchEvent(id, "github:bench/failover#1"))
			status, code := 0, ""
			if err == nil {
				status, code, err = pushTo(pctx, c.http, urls[i], key, body)
			}
			answers <- answer{node: i, status: status, code: code, err: err, at: time.Now()}
		}()
	}
	probe()
	for {
		select {
		case <-ctx.Done():
			return s, fmt.Errorf("no push was accepted within %s (%d probes: %d refused, %d 503, %d other)",
				failoverTimeout, s.Probes, s.Refused, s.Unavailable, s.Failed)
		case <-tick.C:
			probe()
		case a := <-answers:
			inFlight--
			switch {
			case a.err == nil && a.status == http.StatusOK:
				s.Ms, s.AcceptedBy = ms(a.at.Sub(t0)), c.names[a.node]
				return s, nil
			case a.status == 0 && errors.Is(a.err, context.Canceled):
			case a.status == 0:
				s.Refused++
			case a.status == http.StatusServiceUnavailable:
				s.Unavailable++
				s.count(a.code)
			default:
				s.Failed++
				s.count(a.code)
			}
		}
	}
}

func (s *FailoverSample) count(code string) {
	if code == "" {
		code = "none"
	}
	if s.Codes == nil {
		s.Codes = map[string]int{}
	}
	s.Codes[code]++
}

// median returns the middle of xs (the mean of the two middles for an
// even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// sender is one measured path: send delivers one event for worker w and
// returns once it landed; close releases what the path holds.
type sender interface {
	send(ctx context.Context, w int, id string) error
	close()
}

// baseline is a path measured beside the cluster's push path, on the same
// servers, in the same run, with the same senders.
type baseline struct {
	// name is the path's JSON name in the report ("rawJetStream").
	name string
	// into is where its figures go.
	into *Path
	// start builds the path over the cluster.
	start func(ctx context.Context, c *clusterNodes, senders int) (sender, error)
}

// clusterBaselines lists the baselines of the cluster phase, measured in
// this order after the push path: raw JetStream R3 and the HTTP relay
// (its streams R3) on the same servers.
func clusterBaselines(res *ClusterResult) []baseline {
	return []baseline{
		{name: "rawJetStream", into: &res.Raw, start: func(ctx context.Context, c *clusterNodes, senders int) (sender, error) {
			return newRawPath(ctx, c.js, c.nc, senders, clusterReplicas)
		}},
		{name: "httpRelay", into: &res.Relay, start: func(ctx context.Context, c *clusterNodes, senders int) (sender, error) {
			return newRelayOn(ctx, c.js, c.nc, c.http, senders, clusterReplicas)
		}},
	}
}

// clusterPushPath posts signed fake events round-robin over the nodes (one
// sentinel and session per sender, created on node w mod n) and waits for
// the inbox message on the bench's NATS connection. Like a load balancer,
// it moves to the next node on a connection error or a 503.
type clusterPushPath struct {
	c       *clusterNodes
	keys    []string
	subject []string
	landed  []chan struct{}
	unsub   []func()
	// next is each sender's round-robin cursor (sender w alone uses
	// next[w]).
	next []int
}

func newClusterPushPath(ctx context.Context, c *clusterNodes, senders int) (*clusterPushPath, error) {
	p := &clusterPushPath{c: c}
	for w := range senders {
		session := "bench-cluster-" + strconv.Itoa(w)
		subject := "github:bench/cluster#" + strconv.Itoa(w+1)
		home := w % len(c.nodes)
		_, key, err := c.nodes[home].watch(ctx, subject, session)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("create a sentinel on %s: %w", c.names[home], err)
		}
		ch := make(chan struct{}, 1)
		unsub, err := bus.Subscribe(c.nc, inbox.Filter(session), func() {
			select {
			case ch <- struct{}{}:
			default:
			}
		})
		if err != nil {
			p.close()
			return nil, err
		}
		p.keys, p.subject = append(p.keys, key), append(p.subject, subject)
		p.landed, p.unsub, p.next = append(p.landed, ch), append(p.unsub, unsub), append(p.next, home)
	}
	return p, nil
}

func (p *clusterPushPath) send(ctx context.Context, w int, id string) error {
	body, err := json.Marshal(benchEvent(id, p.subject[w]))
	if err != nil {
		return err
	}
	first := p.next[w]
	p.next[w]++
	var errs []error
	for k := range len(p.c.urls) {
		i := (first + k) % len(p.c.urls)
		status, _, err := pushTo(ctx, p.c.http, p.c.urls[i], p.keys[w], body)
		switch {
		case err == nil && status == http.StatusOK:
			return wait(ctx, p.landed[w], "inbox message")
		case ctx.Err() != nil:
			return ctx.Err()
		case movesOn(status, err):
			errs = append(errs, fmt.Errorf("%s: %w", p.c.names[i], err))
			continue
		}
		return fmt.Errorf("%s: %w", p.c.names[i], err)
	}
	return fmt.Errorf("no node accepted the push: %w", errors.Join(errs...))
}

func (p *clusterPushPath) close() {
	for _, unsub := range p.unsub {
		unsub()
	}
}

// pushTo POSTs a signed fake push of body to node url's hook key and
// returns the status and, for an answer other than 200, the answer's error
// code and an error carrying the answer.
func pushTo(ctx context.Context, hc *http.Client, url, key string, body []byte) (status int, code string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/inbound/sentinel-"+key, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	h, sig := FakePushSignature(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(h, sig)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &answer)
		return resp.StatusCode, answer.Error, fmt.Errorf("POST inbound: %d %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return resp.StatusCode, "", nil
}

// movesOn reports answers a load balancer takes to the next node: no
// answer at all (status 0) or 503.
func movesOn(status int, err error) bool {
	return err != nil && (status == 0 || status == http.StatusServiceUnavailable)
}

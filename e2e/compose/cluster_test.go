package compose

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var nodes = []string{"node1", "node2", "node3"}

// The shipped docker-compose.yml: three nodes come up healthy on a machine
// with no registry; an event created on one node, pushed to another, is
// read on the third; a node killed while deliveries flow loses nothing
// and repeats nothing; a node cut off by the network says so through its
// health probe while the other two serve, and catches up once reconnected.
func TestComposeThreeNodes(t *testing.T) {
	needDocker(t)
	p := newProject(t, "docker-compose.yml",
		map[string]string{"node1": "SENTINEL_PORT_1", "node2": "SENTINEL_PORT_2", "node3": "SENTINEL_PORT_3"}, nodes...)
	stage(t, "up", p.up)
	stage(t, "wait for three healthy nodes", func() { p.waitHealthy(3*time.Minute, nodes...) })

	tok := p.token
	stage(t, "smoke: create on node1, deliver to node2, read on node3", func() {
		id := createFakeSentinel(t, p.url("node1"), tok, "github:acme/widgets#1", "smoke")
		body := envelope(t, "evt_smoke_1", "github:acme/widgets#1")
		pushUntilStored(t, []string{p.url("node2")}, id, body, 30*time.Second)
		counts := waitInbox(t, p.url("node3"), tok, "smoke", []string{"evt_smoke_1"}, time.Minute)
		exactlyOnce(t, counts, []string{"evt_smoke_1"})
	})

	stage(t, "kill node2 while deliveries flow, then start it", func() {
		id := createFakeSentinel(t, p.url("node1"), tok, "github:acme/widgets#2", "chaos")
		const n = 40
		var want []string
		for i := range n {
			want = append(want, fmt.Sprintf("evt_kill_%03d", i))
		}
		var wg sync.WaitGroup
		killed := make(chan struct{})
		var sendErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				select {
				case <-killed:
				default:
					close(killed)
				}
			}()
			for i, ev := range want {
				if i == n/4 {
					close(killed) // a quarter sent: kill node2 now
				}
				// Every node in turn, node2 included: its answers stop
				// when it dies and the next node takes the event.
				bases := []string{p.url(nodes[i%3]), p.url(nodes[(i+1)%3]), p.url(nodes[(i+2)%3])}
				if sendErr = tryPush(bases, id, envelope(t, ev, "github:acme/widgets#2"), 90*time.Second); sendErr != nil {
					return
				}
			}
		}()
		<-killed
		p.must(time.Minute, "kill", "node2")
		wg.Wait()
		require.NoError(t, sendErr)
		p.must(time.Minute, "start", "node2")
		p.waitHealthy(2*time.Minute, nodes...)
		counts := waitInbox(t, p.url("node2"), tok, "chaos", want, 2*time.Minute)
		exactlyOnce(t, counts, want)
		exactlyOnce(t, inboxIDs(t, p.url("node3"), tok, "chaos"), want)
	})

	// node2 is the node just restarted: its peers are current, so cutting
	// it off leaves a majority whose every replica group has a quorum.
	stage(t, "partition node2 from the network, then reconnect it", func() {
		c2 := p.container("node2")
		p.docker("network", "disconnect", p.network(), c2)
		// The cut also removes node2's port mapping: look at it from inside.
		deadline := time.Now().Add(time.Minute)
		for {
			code, out := p.exec("node2", "/sentinel", "health")
			if code == 1 && strings.Contains(out, "not ready") {
				t.Logf("node2 cut off: %s", strings.TrimSpace(out))
				break
			}
			require.True(t, time.Now().Before(deadline), "node2 still says ready a minute after the cut (exit %d): %s", code, out)
			time.Sleep(time.Second) // poll the probe
		}
		// The majority keeps serving writes (once the streams node2 led
		// have elected new leaders: a write in between may answer 500, so
		// each attempt uses a session of its own and a repeat cannot
		// double a delivery).
		id, session := "", ""
		deadline = time.Now().Add(time.Minute)
		for attempt := 0; id == ""; attempt++ {
			session = fmt.Sprintf("split%d", attempt)
			var out struct {
				Sentinel struct {
					ID string `json:"id"`
				} `json:"sentinel"`
			}
			status := call(t, http.MethodPost, p.url("node1")+"/sentinels", tok,
				map[string]any{"subject": "github:acme/widgets#3", "sessionId": session, "provider": "fake", "until": "never"}, &out)
			if status == http.StatusCreated {
				id = out.Sentinel.ID
				break
			}
			require.True(t, time.Now().Before(deadline), "the majority refused a create for a minute (last %d)", status)
			t.Logf("create on node1 during the cut answered %d; retrying", status)
			time.Sleep(time.Second) // let the elections settle
		}
		pushUntilStored(t, []string{p.url("node3")}, id, envelope(t, "evt_split_1", "github:acme/widgets#3"), time.Minute)
		waitInbox(t, p.url("node1"), tok, session, []string{"evt_split_1"}, time.Minute)

		p.docker("network", "connect", "--alias", "node2", p.network(), c2)
		p.waitHealthy(2*time.Minute, nodes...)
		// The port mapping comes back with the network; node2 caught up.
		require.Eventually(t, func() bool { return call(t, http.MethodGet, p.url("node2")+"/readyz", "", nil, nil) == http.StatusOK },
			time.Minute, time.Second, "node2's host port answers again")
		exactlyOnce(t, waitInbox(t, p.url("node2"), tok, session, []string{"evt_split_1"}, time.Minute), []string{"evt_split_1"})
	})
}

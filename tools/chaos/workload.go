package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/tools/bench"
)

// watched is one sentinel of the workload.
type watched struct {
	id, session, subject, path string
	hookKey                    string // push only
}

// workload sends events to the target's sentinels until stopped and
// keeps every send for the oracle.
type workload struct {
	t      Target
	c      *client
	tag    string
	o      Options
	mu     sync.Mutex
	sends  []Send
	feed   []string // the feed file's lines
	seen   *sightings
	errLog func(format string, args ...any)
}

// setup creates the sentinels: o.PushSentinels and o.PollSentinels over
// o.Sessions sessions, each created on the next node in turn.
func (w *workload) setup(ctx context.Context) ([]watched, error) {
	var out []watched
	urls := w.t.URLs()
	mk := func(path string, k int) error {
		s := watched{
			session: fmt.Sprintf("chaos-%s-s%d", w.tag, (len(out))%w.o.Sessions),
			subject: fmt.Sprintf("github:chaos-%s/%s#%d", w.tag, path, k+1),
			path:    path,
		}
		var ans struct {
			Sentinel struct {
				ID string `json:"id"`
			} `json:"sentinel"`
		}
		req := map[string]any{"subject": s.subject, "sessionId": s.session, "provider": "fake", "types": []string{"*"}, "until": "never"}
		// A create whose answer was lost would leave a second sentinel on
		// a retry (two messages per event): only a 503 or a refused
		// connection moves on here, and the run starts on a healthy
		// cluster.
		if err := w.c.api(ctx, urls, len(out)%len(urls), http.MethodPost, "/sentinels", req, &ans); err != nil {
			return fmt.Errorf("create the %s sentinel %s: %w", path, s.subject, err)
		}
		if ans.Sentinel.ID == "" {
			return fmt.Errorf("create the %s sentinel %s: the answer holds no sentinel id", path, s.subject)
		}
		s.id, s.hookKey = ans.Sentinel.ID, bench.FakeHookKey(ans.Sentinel.ID)
		out = append(out, s)
		return nil
	}
	for k := range w.o.PushSentinels {
		if err := mk("push", k); err != nil {
			return nil, err
		}
	}
	if w.t.FeedPath() != "" {
		for k := range w.o.PollSentinels {
			if err := mk("poll", k); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// event is the CloudEvent of one send.
func event(id, subject string, n int) sentinel.Event {
	ref, err := sentinel.ParseGitHubSubject(subject)
	subjects := []string{subject}
	if err == nil {
		subjects = ref.Subjects()
	}
	return sentinel.NewEvent(id, "//agentproto.local/sentinel/chaos", "github.check_suite.completed", subject, subjects,
		time.Now().UTC(), fmt.Sprintf("chaos event %d on %s", n, subject), false, map[string]any{"chaosId": id})
}

// push sends s's events one after another, each awaited, until ctx ends.
func (w *workload) push(ctx context.Context, s watched, first int) {
	for n := 0; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("chaos-%s-%s-%d", w.tag, strings.ToLower(s.id), n)
		w.record(w.pushOne(ctx, s, id, n, first+n))
		select {
		case <-ctx.Done():
		case <-time.After(w.o.Interval):
		}
	}
}

// pushOne delivers one signed push the way a load balancer would: to the
// next node, and on a connection error, a timeout, a 503 or a 500 to the
// node after it, with the same body (the event id makes a repeat
// harmless), until a node answers 200, another answer ends it, or
// SendTimeout passes.
func (w *workload) pushOne(ctx context.Context, s watched, id string, n, next int) Send {
	out := Send{ID: id, Sentinel: s.id, Session: s.session, Path: "push", Index: n, Sent: time.Now(), Outcome: Refused}
	body, err := json.Marshal(event(id, s.subject, n))
	if err != nil {
		out.Last, out.Done = err.Error(), time.Now()
		return out
	}
	hk, sig := bench.FakePushSignature(body)
	h := http.Header{hk: {sig}}
	deadline := time.Now().Add(w.o.SendTimeout)
	// The send's own context outlives the run's stop by the deadline: a
	// send cut short at the stop would leave an avoidable unknown.
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	ambiguous := false
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		urls := w.t.URLs()
		u := urls[(next+attempt)%len(urls)]
		out.Attempts++
		a, err := w.c.do(sctx, w.o.RequestTimeout, http.MethodPost, u+"/inbound/sentinel-"+s.hookKey, body, h, false)
		switch {
		case err == nil && a.status == http.StatusOK:
			out.Outcome, out.Done = Accepted, time.Now()
			return out
		case err != nil:
			out.Last = err.Error()
			if !notSent(err) {
				ambiguous = true
			}
		case a.status == http.StatusServiceUnavailable:
			out.Last = "503 " + strings.TrimSpace(string(a.body))
		case a.status >= 500:
			out.Last = strconv.Itoa(a.status) + " " + strings.TrimSpace(string(a.body))
			ambiguous = true
		default:
			out.Last = strconv.Itoa(a.status) + " " + strings.TrimSpace(string(a.body))
			w.errLog("push %s: %s", id, out.Last)
			out.Done = time.Now()
			if ambiguous {
				out.Outcome = Unknown
			}
			return out
		}
		if attempt%len(urls) == len(urls)-1 {
			select { // every node refused: back off before the next round
			case <-sctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	out.Done = time.Now()
	if ambiguous {
		out.Outcome = Unknown
	}
	return out
}

func (w *workload) record(s Send) {
	w.mu.Lock()
	w.sends = append(w.sends, s)
	w.mu.Unlock()
}

// poll appends one event per poll sentinel to the feed every
// FeedInterval, each sentinel's events in order, until ctx ends. The
// file is replaced atomically, so a poll never reads half a line.
func (w *workload) poll(ctx context.Context, ss []watched) error {
	tick := time.NewTicker(w.o.FeedInterval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var batch []Send
		for _, s := range ss {
			id := fmt.Sprintf("chaos-%s-%s-%d", w.tag, strings.ToLower(s.id), n)
			raw, err := json.Marshal(event(id, s.subject, n))
			if err != nil {
				return err
			}
			w.feed = append(w.feed, string(raw))
			batch = append(batch, Send{ID: id, Sentinel: s.id, Session: s.session, Path: "poll", Index: n})
		}
		tmp := w.t.FeedPath() + ".tmp"
		if err := os.WriteFile(tmp, []byte(strings.Join(w.feed, "\n")+"\n"), 0o600); err != nil {
			return fmt.Errorf("write the feed: %w", err)
		}
		if err := os.Rename(tmp, w.t.FeedPath()); err != nil {
			return fmt.Errorf("replace the feed: %w", err)
		}
		now := time.Now()
		for _, s := range batch {
			s.Sent, s.Done, s.Outcome = now, now, Accepted
			w.record(s)
		}
	}
}

// snapshot returns the sends so far.
func (w *workload) snapshot() []Send {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Send(nil), w.sends...)
}

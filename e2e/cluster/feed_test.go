package cluster_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/e2e/e2etest"
)

// fakeFeed is the fake provider's JSON-lines feed file, shared by the
// nodes: every poll reads it whole.
type fakeFeed struct {
	path  string
	lines []string
}

// add appends events and replaces the file atomically, so a poll never
// reads half a line.
func (f *fakeFeed) add(t *testing.T, evs ...sentinel.Event) {
	t.Helper()
	for _, ev := range evs {
		raw, err := json.Marshal(ev)
		require.NoError(t, err)
		f.lines = append(f.lines, string(raw))
	}
	tmp := f.path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(strings.Join(f.lines, "\n")+"\n"), 0o600))
	require.NoError(t, os.Rename(tmp, f.path))
}

// feedEvent is a fake provider event on subject.
func feedEvent(id, subject string) sentinel.Event {
	ref, _ := sentinel.ParseGitHubSubject(subject)
	return sentinel.NewEvent(id, "//agentproto.local/sentinel/fake", "github.check_suite.completed", ref.Subject(), ref.Subjects(),
		time.Unix(1790000000, 0), "checks on "+subject+" ("+id+")", false, map[string]any{"id": id})
}

// feedWorkload is n fake-provider sentinels on n repositories, created
// round-robin over the first nodes of a cluster, each with a session of its
// own; want holds, per sentinel, the event ids its inbox must hold, in order.
type feedWorkload struct {
	t    *testing.T
	c    *e2etest.Cluster
	feed *fakeFeed
	tag  string
	ids  []string
	want [][]string
}

func newFeedWorkload(t *testing.T, c *e2etest.Cluster, feed *fakeFeed, tag string, n, nodes int) *feedWorkload {
	t.Helper()
	w := &feedWorkload{t: t, c: c, feed: feed, tag: tag, ids: make([]string, n), want: make([][]string, n)}
	for k := range n {
		w.ids[k] = createSentinel(t, nodeAPI(t, c, k%nodes), map[string]any{"subject": w.subject(k), "types": []string{"*"}, "sessionId": w.session(k),
			"provider": "fake", "until": "never"})
	}
	return w
}

// subject is sentinel k's repository (one per sentinel, so poll ownership
// spreads over the nodes).
func (w *feedWorkload) subject(k int) string { return fmt.Sprintf("github:acme/%s%d#1", w.tag, k) }

func (w *feedWorkload) session(k int) string { return fmt.Sprintf("%s-s%d", w.tag, k) }

// round adds one event per sentinel to the feed (ids evt_<tag>_<r>_<k>).
func (w *feedWorkload) round(r int) {
	var evs []sentinel.Event
	for k := range w.ids {
		id := fmt.Sprintf("evt_%s_%d_%d", w.tag, r, k)
		evs = append(evs, feedEvent(id, w.subject(k)))
		w.want[k] = append(w.want[k], id)
	}
	w.feed.add(w.t, evs...)
}

// delivered waits, up to d per session, until every session's inbox read
// on n holds what it must, in order and once.
func (w *feedWorkload) delivered(n api, d time.Duration) {
	w.t.Helper()
	for k := range w.ids {
		inboxHolds(w.t, w.c, n, w.session(k), w.want[k], d)
	}
}

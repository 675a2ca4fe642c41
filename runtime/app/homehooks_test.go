package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/app"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// markerHook writes a hook script that appends the name of the node that
// ran it ($SENTINEL_NODE) to <dir>/<its second argument>, and returns the
// script and the dir.
func markerHook(t *testing.T) (script, dir string) {
	t.Helper()
	dir = t.TempDir()
	script = filepath.Join(t.TempDir(), "hook.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$SENTINEL_NODE\" >> \"$1/$2\"\n"), 0o755))
	return script, dir
}

// marker reads what the hook wrote under name ("" when it never ran).
func marker(dir, name string) string {
	raw, _ := os.ReadFile(filepath.Join(dir, name))
	return string(raw)
}

// pendingHookJobs counts the hook jobs waiting for node.
func pendingHookJobs(t *testing.T, a *app.App, node string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := a.Bus.Stream(ctx, sessions.StreamHookJobs)
	require.NoError(t, err)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(sessions.HookJobSubject(node)))
	require.NoError(t, err)
	return info.State.Subjects[sessions.HookJobSubject(node)]
}

// publishEvent stores a fake event for a sentinel straight into its
// partition, for whichever node's workers pull it.
func publishEvent(t *testing.T, a *app.App, sentinelID, evID, subject string) {
	t.Helper()
	ref, err := sentinel.ParseGitHubSubject(subject)
	require.NoError(t, err)
	ev := sentinel.NewEvent(evID, "//agentproto.local/sentinel/fake", "github.check_suite.completed", subject, ref.Subjects(),
		time.Now().UTC(), "CI passed on "+subject, false, map[string]any{"n": evID})
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	_, err = a.Bus.PublishEvent(context.Background(), sentinelID, evID, raw)
	require.NoError(t, err)
}

// write is expect for a write on a loaded machine: a node whose heartbeat
// lagged answers 503 cluster_unavailable (nothing done) for a moment, so
// the write is repeated until it is answered otherwise.
func write(n *node, status int, method, path string, body any) map[string]any {
	n.t.Helper()
	var resp *http.Response
	var raw []byte
	bustest.Eventually(n.t, 60*time.Second, func() bool {
		resp, raw = n.req(method, path, body)
		return resp.StatusCode != http.StatusServiceUnavailable
	}, "%s %s to be served", method, path)
	require.Equal(n.t, status, resp.StatusCode, "%s %s: %s", method, path, raw)
	var out map[string]any
	require.NoError(n.t, json.Unmarshal(raw, &out), string(raw))
	return out
}

func watch(n *node, session, subject string) string {
	out := write(n, 201, "POST", "/sentinels", map[string]any{"subject": subject, "sessionId": session, "provider": "fake", "types": []string{"*"}})
	return out["sentinel"].(map[string]any)["id"].(string)
}

func inboxTexts(n *node, session string) []string {
	out := n.expect(200, "GET", "/sessions/"+session+"/inbox", nil)
	var texts []string
	for _, m := range out["messages"].([]any) {
		texts = append(texts, m.(map[string]any)["text"].(string))
	}
	return texts
}

// A session's command hooks run on the node it registered through (where
// its harness lives), whichever node handled the message or the event:
// before, the node that stored a message ran the notify hook and the
// delivering node the resume hook, on a machine where the harness may not
// be.
func TestCommandHooksRunOnTheSessionsHomeNode(t *testing.T) {
	apps := startCluster(t, clusterConfigs(t, 3))
	a, b := &node{t: t, app: apps[0]}, &node{t: t, app: apps[1]}
	script, dir := markerHook(t)
	hooks := map[string]any{"notify": []string{script, dir, "notify-{messageId}"}, "resume": []string{script, dir, "resume-{sessionId}"}}
	write(a, 201, "POST", "/sessions", map[string]any{"id": "homed", "hooks": hooks})
	require.Equal(t, "n1", b.expect(200, "GET", "/sessions/homed", nil)["session"].(map[string]any)["homeNode"], "the view names the home")

	// A message stored by B wakes the session on A.
	msg := write(b, 201, "POST", "/sessions/homed/messages", map[string]any{"text": "wake up"})["message"].(map[string]any)
	name := "notify-" + msg["id"].(string)
	bustest.Eventually(t, 30*time.Second, func() bool { return marker(dir, name) != "" }, "the notify hook to run")
	bustest.Eventually(t, 30*time.Second, func() bool { return pendingHookJobs(t, apps[1], "n1") == 0 }, "the job to be acked")
	require.Equal(t, "n1\n", marker(dir, name), "ran once, on the home node")

	// An event for the crashed session, delivered by B, resumes it on A.
	sid := watch(b, "homed", "github:o/r#1")
	apps[0].Workers.Stop()
	apps[2].Workers.Stop() // only B delivers
	write(b, 202, "POST", "/sessions/homed/events", map[string]any{"kind": "crashed"})
	publishEvent(t, apps[1], sid, "evt_resume", "github:o/r#1")
	bustest.Eventually(t, 30*time.Second, func() bool { return len(inboxTexts(b, "homed")) == 2 }, "the event delivered after the resume")
	require.Equal(t, "n1\n", marker(dir, "resume-homed"), "the resume hook ran once, on the home node")
	require.Equal(t, "running", b.expect(200, "GET", "/sessions/homed", nil)["session"].(map[string]any)["status"])
	require.Contains(t, inboxTexts(a, "homed")[1], "CI passed on github:o/r#1")
	require.Empty(t, b.expect(200, "GET", "/parked", nil)["parked"])
}

// hits records the requests a URL hook received.
type hits struct {
	mu   sync.Mutex
	seen []string
}

func (h *hits) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.seen = append(h.seen, string(raw))
	h.mu.Unlock()
}

func (h *hits) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

// While a session's home node is down, its command hooks wait for it: a
// notify job stays in the stream, an event that needs a resume is retried
// (not acked, not parked); both run on the home node when it comes back.
// A URL hook runs at once on the node that needs it.
func TestHooksOfADownHomeNodeWaitForItURLHooksDoNot(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].Delivery.RetryBase, cfgs[i].Delivery.RetryMax, cfgs[i].Delivery.MaxAttempts = 100*time.Millisecond, time.Second, 1000
	}
	apps := startCluster(t, cfgs)
	a, b := &node{t: t, app: apps[0]}, &node{t: t, app: apps[1]}
	script, dir := markerHook(t)
	url := &hits{}
	srv := httptest.NewServer(url)
	defer srv.Close()
	write(a, 201, "POST", "/sessions", map[string]any{"id": "cmd", "hooks": map[string]any{
		"notify": []string{script, dir, "notify-{messageId}"}, "resume": []string{script, dir, "resume-{sessionId}"}}})
	write(a, 201, "POST", "/sessions", map[string]any{"id": "web", "hooks": map[string]any{"notify": srv.URL + "/wake"}})
	sid := watch(b, "cmd", "github:o/r#2")

	require.NoError(t, apps[0].Stop(context.Background()))

	write(b, 201, "POST", "/sessions/web/messages", map[string]any{"text": "wake up"})
	bustest.Eventually(t, 30*time.Second, func() bool { return url.count() == 1 }, "the URL hook to run with its home down")

	msg := write(b, 201, "POST", "/sessions/cmd/messages", map[string]any{"text": "wake up"})["message"].(map[string]any)
	name := "notify-" + msg["id"].(string)
	bustest.Eventually(t, 30*time.Second, func() bool { return pendingHookJobs(t, apps[1], "n1") == 1 }, "the job to wait for n1")
	require.Empty(t, marker(dir, name), "no other node ran it")

	write(b, 202, "POST", "/sessions/cmd/events", map[string]any{"kind": "crashed"})
	publishEvent(t, apps[1], sid, "evt_wait", "github:o/r#2")
	cons, err := apps[1].Bus.PartitionConsumer(context.Background(), bus.Partition(sid, cfgs[1].Bus.Partitions))
	require.NoError(t, err)
	bustest.Eventually(t, 30*time.Second, func() bool {
		info, err := cons.Info(context.Background())
		return err == nil && info.NumRedelivered > 0 && info.NumAckPending+int(info.NumPending) == 1
	}, "the delivery to be retried, not acked")
	require.Empty(t, b.expect(200, "GET", "/parked", nil)["parked"], "not parked")
	require.Len(t, inboxTexts(b, "cmd"), 1, "not delivered")
	require.Empty(t, marker(dir, "resume-cmd"))

	back, err := app.New(cfgs[0], testLogger(t, "n1"))
	require.NoError(t, err)
	require.NoError(t, back.Start(context.Background()))
	t.Cleanup(func() { _ = back.Stop(context.Background()) })

	bustest.Eventually(t, 60*time.Second, func() bool { return marker(dir, name) != "" }, "the waiting job to run on n1")
	bustest.Eventually(t, 60*time.Second, func() bool { return len(inboxTexts(b, "cmd")) == 2 }, "the event delivered after the resume on n1")
	require.Equal(t, "n1\n", marker(dir, "resume-cmd"))
	require.Contains(t, marker(dir, name), "n1\n")
	require.Empty(t, b.expect(200, "GET", "/parked", nil)["parked"])
	require.Equal(t, 1, url.count())
}

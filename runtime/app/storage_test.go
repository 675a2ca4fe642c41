package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/app"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// postNote appends a human message to a session's inbox and returns the
// status and error code of the answer.
func postNote(t *testing.T, n *node, session, text string) (int, string) {
	t.Helper()
	resp, raw := n.req("POST", "/sessions/"+session+"/messages", map[string]any{"text": text})
	if resp.StatusCode == 201 {
		return 201, ""
	}
	var out struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out.Error
}

// readyReason is /readyz's reason ("" while ready).
func readyReason(t *testing.T, n *node) string {
	t.Helper()
	resp, raw := n.req("GET", "/readyz", nil)
	if resp.StatusCode == 200 {
		return ""
	}
	var out struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(raw, &out)
	return out.Reason + "?"
}

// TestAFullStoreRefusesWritesLosesNothingAndRecovers: with a small
// nats.max_store filled by something else, writes answer 503
// storage_full (API and readiness), what was accepted before stays
// readable exactly once, and writes resume once space returns.
func TestAFullStoreRefusesWritesLosesNothingAndRecovers(t *testing.T) {
	t.Parallel()
	n := startNodeWith(t, func(c *app.Config) {
		c.NATS.MaxStore = 8 << 20
		c.NATS.StorageCheck = 50 * time.Millisecond
	})
	var accepted []string
	for i := range 5 {
		text := fmt.Sprintf("note %d", i)
		status, code := postNote(t, n, "box", text)
		require.Equal(t, 201, status, code)
		accepted = append(accepted, text)
	}

	ctx := context.Background()
	js := jetStreamOf(t, n.app)
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TEST_BALLAST", Subjects: []string{"test.ballast.>"}})
	require.NoError(t, err)
	chunk := make([]byte, 64<<10)
	var pubErr error
	for i := 0; i < 400 && pubErr == nil; i++ {
		_, pubErr = js.Publish(ctx, fmt.Sprintf("test.ballast.%d", i), chunk)
	}
	require.Error(t, pubErr, "the ballast never filled nats.max_store")
	require.True(t, bus.StorageFull(pubErr), "JetStream refused the ballast for storage: %v", pubErr)

	status, code := postNote(t, n, "box", "while full")
	require.Equal(t, 503, status)
	require.Equal(t, "storage_full", code)
	bustest.Eventually(t, 10*time.Second, func() bool { return readyReason(t, n) == "storage_full?" }, "/readyz names storage_full")
	resp, raw := n.req("POST", "/sentinels", map[string]any{"subject": "github:o/r#1", "sessionId": "box", "provider": "fake"})
	require.Equal(t, 503, resp.StatusCode, string(raw))
	require.Contains(t, string(raw), `"error":"storage_full"`)
	require.Equal(t, accepted, inboxTexts(n, "box"), "reads are served, nothing accepted is lost")
	require.Equal(t, 1.0, scrape(t, n.app, "sentinel_storage_")["sentinel_storage_full"])

	require.NoError(t, js.DeleteStream(ctx, "TEST_BALLAST"))
	bustest.Eventually(t, 10*time.Second, func() bool { return readyReason(t, n) == "" }, "ready again once space returns")
	status, code = postNote(t, n, "box", "after")
	require.Equal(t, 201, status, code)
	require.Equal(t, append(accepted, "after"), inboxTexts(n, "box"), "each accepted write exactly once")
	require.Equal(t, 0.0, scrape(t, n.app, "sentinel_storage_")["sentinel_storage_full"])
}

// TestAFullDiskRestartsTheEmbeddedServerOnceSpaceIsBack fills the real
// filesystem under the store (a tmpfs the test mounts; needs root): the
// node refuses writes while the disk is short of nats.min_free, a write
// that reaches the full disk breaks its stream inside nats-server, and
// once the ballast is gone the node restarts its embedded server and
// stores writes again, with everything accepted before intact.
func TestAFullDiskRestartsTheEmbeddedServerOnceSpaceIsBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	n, logs := startNodeLogged(t, func(c *app.Config) {
		c.NATS.SyncAlways = true // the default: an ack means the bytes are on disk
		c.NATS.StoreDir = filepath.Join(dir, "jetstream")
		c.NATS.MinFree = 4 << 20
		c.NATS.StorageCheck = 50 * time.Millisecond
	})
	var accepted []string
	for i := range 5 {
		text := fmt.Sprintf("note %d", i)
		status, code := postNote(t, n, "box", text)
		require.Equal(t, 201, status, code)
		accepted = append(accepted, text)
	}

	ballast := filepath.Join(dir, "ballast")
	fillDisk(t, ballast)
	bustest.Eventually(t, 10*time.Second, func() bool { return readyReason(t, n) == "storage_full?" }, "/readyz names storage_full")
	status, code := postNote(t, n, "box", "while full")
	require.Equal(t, 503, status)
	require.Equal(t, "storage_full", code)
	// A writer the guard does not stand in front of meets the full disk:
	// nats-server leaves the inbox stream broken until it restarts.
	pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, err := jetStreamOf(t, n.app).Publish(pctx, inbox.Subject("box", "msg_direct"), make([]byte, 256<<10))
	cancel()
	require.Error(t, err, "a write to a full disk is not acknowledged")
	require.Equal(t, accepted, inboxTexts(n, "box"))

	require.NoError(t, os.Remove(ballast))
	bustest.Eventually(t, 30*time.Second, func() bool { return readyReason(t, n) == "" }, "ready again once space returns")
	bustest.Eventually(t, 15*time.Second, func() bool {
		status, _ := postNote(t, n, "box", "after")
		return status == 201
	}, "the inbox stream stores writes again (the embedded server was restarted)")
	got := inboxTexts(n, "box")
	require.Equal(t, accepted, got[:len(accepted)], "nothing accepted before the disk filled is lost")
	require.Equal(t, "after", got[len(got)-1])
	require.Equal(t, 1, strings.Count(logs.String(), "embedded nats-server restarted"), "one restart")
	require.Equal(t, 1.0, scrape(t, n.app, "sentinel_storage_")["sentinel_storage_restarts"])
}

// fillDisk writes path until the filesystem under it is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.True(t, errors.Is(err, syscall.ENOSPC), "filling the disk: %v", err)
			return
		}
	}
}

package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/runtime/app"
)

// appRepo is the repository of the App fixture (providers/githubapp/testdata).
const appRepo = "Codertocat/Hello-World"

// startGitHubNode starts a node whose in-process GitHub calls all reach
// the fake (WithGitHubHTTP), with the fake's token in GH_TOKEN and no gh.
func startGitHubNode(t *testing.T, gh *githubtest.Server) (*node, *syncBuffer) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GH_TOKEN", gh.Token())
	for _, k := range []string{"GITHUB_TOKEN", "GH_HOST", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"} {
		t.Setenv(k, "")
	}
	logs := &syncBuffer{}
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	a, err := app.New(cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), app.WithGitHubHTTP(gh.HTTPClient()))
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	return &node{t: t, app: a}, logs
}

// appKeyFile registers a fresh App key with the fake and writes it as
// GitHub hands it out (PKCS#1 PEM), mode 0600.
func appKeyFile(t *testing.T, gh *githubtest.Server, appID int64) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	gh.SetApp(appID, "sentinel-test", &key.PublicKey)
	path := filepath.Join(t.TempDir(), "app.pem")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600))
	return path
}

// TestGitHubAppThroughTheNode: the App set up through the API, a watch on
// a PR of an installed repository through github-app, a delivery signed
// with the App's secret POSTed over real HTTP to
// /inbound/sentinel-github-app reaches the session's inbox; and a local-gh
// poll of a PR of that repository spends the installation's quota, not
// the user's token, as the quota view shows (credential installation:<id>).
func TestGitHubAppThroughTheNode(t *testing.T) {
	const secret = "app-webhook-secret-through-the-node"
	gh := githubtest.New(t, githubtest.Options{Start: time.Now()})
	gh.SetRateLimit(5000, time.Hour)
	keyFile := appKeyFile(t, gh, 4242)
	inst := gh.Install("Codertocat", appRepo)
	gh.OpenPR(appRepo, githubtest.PR{Number: 2})
	gh.OpenPR(appRepo, githubtest.PR{Number: 3})
	n, logs := startGitHubNode(t, gh)

	out := n.expect(200, http.MethodPost, "/adapters/github-app/setup", map[string]any{"fields": map[string]string{
		"appId": "4242", "privateKeyFile": keyFile, "webhookSecret": secret}})
	require.Equal(t, true, out["setup"].(map[string]any)["readiness"].(map[string]any)["ready"], "%v", out)

	out = n.expect(201, http.MethodPost, "/sentinels", map[string]any{"subject": "github:" + appRepo + "#2", "sessionId": "s1", "provider": "github-app"})
	require.Equal(t, "github-app", out["sentinel"].(map[string]any)["provider"])

	body, err := os.ReadFile(filepath.Join("..", "..", "providers", "githubapp", "testdata", "pull_request_closed.json"))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, n.app.URL()+"/inbound/sentinel-github-app", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	req.Header.Set(github.WebhookSignatureHeader, github.SignWebhook(secret, body))
	resp, err := reqClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	var got struct {
		Delivered int `json:"delivered"`
	}
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, 1, got.Delivered, string(raw))

	var msgs []any
	bustest.Eventually(t, 20*time.Second, func() bool {
		msgs = n.expect(200, http.MethodGet, "/sessions/s1/inbox", nil)["messages"].([]any)
		return len(msgs) == 1
	}, "the delivery reaches the session's inbox")
	msg, _ := json.Marshal(msgs[0])
	require.Contains(t, string(msg), "github.pull_request.closed")
	require.Contains(t, string(msg), github.WebhookEventID("72d3162e-cc78-11e3-81ab-4c9367dc0958"))

	// local-gh on a PR of the covered repository polls with the
	// installation's token.
	tokenBefore := gh.UsedBy("token " + gh.Token())
	out = n.expect(201, http.MethodPost, "/sentinels", map[string]any{"subject": "github:" + appRepo + "#3", "sessionId": "s2", "provider": "local-gh"})
	id := out["sentinel"].(map[string]any)["id"].(string)
	n.expect(200, http.MethodPost, "/sentinels/poll?id="+id, nil)
	cred := "installation:" + strconv.FormatInt(inst, 10)
	var budget map[string]any
	bustest.Eventually(t, 10*time.Second, func() bool {
		for _, a := range n.expect(200, http.MethodGet, "/adapters", nil)["adapters"].([]any) {
			ad := a.(map[string]any)
			if ad["slug"] != "github-app" {
				continue
			}
			q, _ := ad["info"].(map[string]any)["quota"].([]any)
			for _, b := range q {
				if b.(map[string]any)["credential"] == cred {
					budget = b.(map[string]any)
					return true
				}
			}
		}
		return false
	}, "the github-app adapter's quota view names %s", cred)
	require.Positive(t, budget["used"], "%v", budget)
	require.Equal(t, float64(5000), budget["limit"])
	// The sentinel's status shows the budget its polls spend: the
	// installation's, not the token's.
	status := n.expect(200, http.MethodGet, "/sentinels/"+id+"/status", nil)
	raw, _ = json.Marshal(status)
	require.Contains(t, string(raw), `"credential":"`+cred+`"`, string(raw))
	require.NotContains(t, string(raw), `"credential":"token"`, string(raw))
	require.Positive(t, gh.Count(http.MethodGet, "/repos/"+appRepo+"/pulls/3"))
	require.Equal(t, tokenBefore, gh.UsedBy("token "+gh.Token()), "the user's token spent nothing on the covered repository")
	require.NotContains(t, logs.String(), secret)
	require.NotContains(t, logs.String(), "ghs_")
}

// TestThrottledPollsAreCounted: a secondary limit met by a local-gh poll
// pauses the node's token; the next poll, even one asked for, is refused
// by the quota governor without a request and counted in
// sentinel_poll_throttled_total on /metrics.
func TestThrottledPollsAreCounted(t *testing.T) {
	gh := githubtest.New(t, githubtest.Options{Start: time.Now()})
	gh.SetRateLimit(5000, time.Hour)
	gh.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	n, _ := startGitHubNode(t, gh)
	id := n.expect(201, http.MethodPost, "/sentinels", map[string]any{"subject": "github:acme/widgets#7", "sessionId": "s1", "provider": "local-gh"})["sentinel"].(map[string]any)["id"].(string)
	throttled := func() string {
		_, raw := n.req(http.MethodGet, "/metrics", nil)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "sentinel_poll_throttled_total ") {
				return strings.TrimPrefix(line, "sentinel_poll_throttled_total ")
			}
		}
		return "absent"
	}
	require.Equal(t, "0", throttled())

	gh.SetSecondaryLimit(1, time.Hour, 0) // the poll's second request meets it
	n.expect(200, http.MethodPost, "/sentinels/poll?id="+id, nil)
	_, secondary := gh.RateLimited()
	require.Equal(t, 1, secondary)
	sent := len(gh.Requests())
	n.expect(200, http.MethodPost, "/sentinels/poll?id="+id, nil)
	require.Len(t, gh.Requests(), sent, "the paused token sends nothing")
	count, err := strconv.Atoi(throttled())
	require.NoError(t, err)
	require.GreaterOrEqual(t, count, 1, "the refused poll is counted (a periodic tick within the pause would be too)")
}

package cluster_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// needGH skips the test when the real gh CLI is not installed (.ci/run
// installs it).
func needGH(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		t.Skip("gh is not on PATH: this test drives the real gh against the fake GitHub (.ci/run installs it)")
	}
}

// ghNodeEnv is the environment that points a node's gh and GitHub client
// at the fake GitHub: the fake's isolated environment, with every
// inherited variable the fake dropped (GH_*, GITHUB_*, proxies, XDG_*...)
// blanked, since the harness starts from the test's environment.
func ghNodeEnv(gh *githubtest.Server, extra ...string) []string {
	env := gh.Env(gh.Token())
	keep := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep[k] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !keep[k] && !strings.HasPrefix(k, "AGENTPROTO_") {
			out = append(out, k+"=")
		}
	}
	out = append(out, env...)
	return append(out, extra...)
}

// webhookFixture reads a real GitHub payload from the provider's testdata.
func webhookFixture(t *testing.T, rel string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "providers", "github", "testdata", "webhooks", rel))
	require.NoError(t, err)
	return raw
}

// commentDelivery is the body of a GitHub issue_comment.created delivery
// on PR number pr of the fixture's repository, made distinct by n (the
// comment's id and text): an event's id is the digest of its body.
func commentDelivery(t *testing.T, pr, n int) []byte {
	t.Helper()
	var payload map[string]any
	require.NoError(t, json.Unmarshal(webhookFixture(t, "issue_comment/created-1.json"), &payload))
	payload["issue"].(map[string]any)["number"] = pr
	cm := payload["comment"].(map[string]any)
	cm["id"] = 900000000 + n
	cm["body"] = fmt.Sprintf("comment number %d", n)
	raw, err := json.Marshal(payload)
	require.NoError(t, err)
	return raw
}

// ghHeaders are the headers of a GitHub delivery of event, signed with
// secret.
func ghHeaders(event, guid, secret string, body []byte) http.Header {
	h := http.Header{}
	h.Set("User-Agent", "GitHub-Hookshot/e2e")
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", guid)
	h.Set(github.WebhookSignatureHeader, github.SignWebhook(secret, body))
	return h
}

// newGUID returns a random delivery id shaped like X-GitHub-Delivery.
func newGUID(t *testing.T) string {
	t.Helper()
	var b [16]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

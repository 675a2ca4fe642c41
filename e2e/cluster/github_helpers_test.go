package cluster_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github"
)

// needGH skips the test when the real gh CLI is not installed (.ci/run
// installs it).
func needGH(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		t.Skip("gh is not on PATH: this test drives the real gh against the fake GitHub (.ci/run installs it)")
	}
}

// commentDelivery is the body of a GitHub issue_comment.created delivery
// on PR number pr of the fixture's repository, made distinct by n (the
// comment's id and text): an event's id is the digest of its body.
func commentDelivery(t *testing.T, pr, n int) []byte {
	t.Helper()
	var payload map[string]any
	require.NoError(t, json.Unmarshal(e2etest.WebhookFixture(t, "issue_comment/created-1.json"), &payload))
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

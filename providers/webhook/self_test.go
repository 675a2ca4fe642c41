package webhook

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// TestWebhookEventsOfTheAuthenticatedUserAreSelfCaused: on real GitHub
// payloads, an event whose sender is the user gh is logged in as (GET
// /user) carries selfcaused; another sender's does not; the identity is
// asked once.
func TestWebhookEventsOfTheAuthenticatedUserAreSelfCaused(t *testing.T) {
	h := newHarness(t, githubtest.Options{Viewer: "Codertocat"})
	p := h.provider("node-a")
	hd := h.create(p, "github:acme/widgets#2")
	secret := h.liveHook(testRepo).Secret
	parse := func(event, file string) bool {
		t.Helper()
		body, err := os.ReadFile(filepath.Join("..", "github", "testdata", "webhooks", file))
		require.NoError(t, err)
		hdr := http.Header{}
		hdr.Set("X-GitHub-Event", event)
		hdr.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		hdr.Set(github.WebhookSignatureHeader, github.SignWebhook(secret, body))
		evs, err := p.ParseInbound(ctxT(t), providers.Inbound{HookKey: hd.StateString("hookKey"), Header: hdr, Body: body}, hd)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		return evs[0].SelfCaused
	}
	require.True(t, parse("issue_comment", "issue_comment/created-1.json"), "Codertocat's own comment")
	require.True(t, parse("pull_request", "pull_request/synchronize-1.json"), "Codertocat's own push")
	require.True(t, parse("pull_request_review", "pull_request_review/submitted-1.json"), "Codertocat's own review")
	require.False(t, parse("pull_request", "pull_request/closed-by-maintainer.json"), "a maintainer's close")
	users := 0
	for _, r := range h.gh.Requests() {
		if r.Path == "/user" {
			users++
		}
	}
	require.Equal(t, 1, users, "GET /user is asked once and cached")
}

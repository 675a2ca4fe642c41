package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzNormalizeWebhook feeds arbitrary event names, delivery ids and bodies
// to the normalizer: it must never panic, and what it returns must be a
// valid envelope or a *WebhookError.
func FuzzNormalizeWebhook(f *testing.F) {
	for _, in := range []string{"pull_request/closed-1", "issue_comment/created-1", "check_suite/completed-1", "workflow_run/completed-1", "pull_request_review/submitted-1"} {
		body, err := os.ReadFile(filepath.Join("testdata", "webhooks", in+".json"))
		require.NoError(f, err)
		f.Add(filepath.Dir(in), "d-1", body)
	}
	f.Add("pull_request", "d", []byte(`{"action":"closed","number":1,"pull_request":{},"repository":{"full_name":"o/r"}}`))
	f.Add("issue_comment", "x", []byte(`{"action":"created","issue":{"number":3},"comment":{},"repository":{"name":"r","owner":{"login":"o"}}}`))
	f.Add("pull_request", "d", []byte(`{"action":"submitted","review":{},"pull_request":{"number":1},"repository":{"full_name":"o/r"}}`))
	f.Add("check_suite", "d", []byte(`{"action":"completed","check_run":{"check_suite":{}},"repository":{"full_name":"o/r"}}`))
	f.Fuzz(func(t *testing.T, event, delivery string, body []byte) {
		evs, err := NormalizeWebhook(event, delivery, body, "", whGoldenNow)
		if err != nil {
			require.NotEmpty(t, WebhookReason(err))
			require.Empty(t, evs)
			return
		}
		require.Len(t, evs, 1)
		require.NoError(t, evs[0].Validate())
		require.Equal(t, "evt_"+delivery, evs[0].ID)
		require.Equal(t, WebhookBodyKey(body), evs[0].DedupKey)
		require.True(t, strings.HasPrefix(evs[0].Type, "github."+event+"."), "%s normalized as %s", event, evs[0].Type)
	})
}

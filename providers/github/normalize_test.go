package github

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// whUpdateGolden is the -update flag, shared with any other golden test of
// the package that declared it first.
var whUpdateGolden = whLookupOrDefineBool("update", "rewrite golden files")

func whLookupOrDefineBool(name, usage string) func() bool {
	if f := flag.Lookup(name); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	b := flag.Bool(name, false, usage)
	return func() bool { return *b }
}

var whGoldenNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// whGoldenOut is what a golden file holds: the events, or the refusal.
type whGoldenOut struct {
	Events json.RawMessage `json:"events,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func TestNormalizeWebhookGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "webhooks", "*", "*.json"))
	require.NoError(t, err)
	var inputs []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".golden.json") {
			inputs = append(inputs, f)
		}
	}
	require.Greater(t, len(inputs), 60, "fixtures missing")
	for _, in := range inputs {
		event := filepath.Base(filepath.Dir(in))
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(event+"/"+name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			require.NoError(t, err)
			evs, err := NormalizeWebhook(event, "delivery-"+event+"-"+name, body, "", whGoldenNow)
			var out whGoldenOut
			if err != nil {
				out.Error = WebhookReason(err)
				require.NotEmpty(t, out.Error, "error is not a *WebhookError: %v", err)
			} else {
				for _, ev := range evs {
					require.NoError(t, ev.Validate())
					require.LessOrEqual(t, len(ev.Data), 32*1024)
				}
				out.Events, err = json.Marshal(evs)
				require.NoError(t, err)
			}
			got, err := json.MarshalIndent(out, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')
			golden := strings.TrimSuffix(in, ".json") + ".golden.json"
			if whUpdateGolden() {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run with -update to create it")
			require.JSONEq(t, string(want), string(got))
		})
	}
}

func TestNormalizeWebhookSupportedSet(t *testing.T) {
	for _, ev := range WebhookEvents() {
		_, err := NormalizeWebhook(ev, "d1", []byte(`{}`), "", whGoldenNow)
		require.NotErrorIs(t, err, ErrUnsupportedWebhookEvent, ev)
	}
	for _, ev := range []string{"ping", "push", "check_run", "installation", "installation_repositories", "", "pull_request\n"} {
		_, err := NormalizeWebhook(ev, "d1", []byte(`{}`), "", whGoldenNow)
		require.ErrorIs(t, err, ErrUnsupportedWebhookEvent, ev)
		require.True(t, strings.HasPrefix(WebhookReason(err), "unsupported_event:"))
		require.NotContains(t, WebhookReason(err), "\n")
	}
}

func TestNormalizeWebhookRefusals(t *testing.T) {
	repo := `"repository":{"id":1,"full_name":"o/r","name":"r","owner":{"login":"o"}}`
	tests := []struct {
		name, event, delivery, body, reason string
	}{
		{"not json", "pull_request", "d", `{"action":`, ReasonInvalidJSON},
		{"array body", "pull_request", "d", `[]`, ReasonInvalidPayload},
		{"missing delivery", "pull_request", "", `{}`, ReasonMissingDelivery},
		{"delivery with newline", "pull_request", "d\nx", `{}`, ReasonInvalidDelivery},
		{"missing repository", "pull_request", "d", `{"action":"opened","number":1}`, ReasonMissingRepository},
		{"repository without names", "pull_request", "d", `{"action":"opened","number":1,"repository":{"id":1}}`, ReasonMissingRepository},
		{"repository name with space", "pull_request", "d", `{"action":"opened","number":1,"repository":{"full_name":"o/r x"}}`, ReasonInvalidPayload},
		{"repository named ..", "pull_request", "d", `{"action":"opened","number":1,"pull_request":{"number":1},"repository":{"full_name":"o/.."}}`, ReasonInvalidPayload},
		{"owner named .", "pull_request", "d", `{"action":"opened","number":1,"pull_request":{"number":1},"repository":{"name":"r","owner":{"login":"."}}}`, ReasonInvalidPayload},
		{"repository of wrong type", "pull_request", "d", `{"action":"opened","repository":"o/r"}`, ReasonInvalidPayload},
		{"missing action", "pull_request", "d", `{"number":1,"pull_request":{"number":1},` + repo + `}`, ReasonMissingAction},
		{"status with an action", "status", "d", `{"action":"created","sha":"x","state":"success","context":"c","commit":{},` + repo + `}`, ReasonEventMismatch},
		{"status of an unknown state", "status", "d", `{"sha":"6113728f27ae82c7b1a177c8d03f9e96e0adf246","state":"done","context":"c","commit":{},` + repo + `}`, ReasonInvalidPayload},
		{"status without a context", "status", "d", `{"sha":"6113728f27ae82c7b1a177c8d03f9e96e0adf246","state":"success","commit":{},` + repo + `}`, ReasonInvalidPayload},
		{"merge group without its object", "merge_group", "d", `{"action":"destroyed",` + repo + `}`, ReasonEventMismatch},
		{"review comment as a thread", "pull_request_review_thread", "d", `{"action":"resolved","comment":{},"pull_request":{"number":1},` + repo + `}`, ReasonEventMismatch},
		{"thread as a review comment", "pull_request_review_comment", "d", `{"action":"created","thread":{},"pull_request":{"number":1},` + repo + `}`, ReasonEventMismatch},
		{"review comment without pr", "pull_request_review_comment", "d", `{"action":"created","comment":{},` + repo + `}`, ReasonMissingPullRequestNumber},
		{"workflow job action unknown", "workflow_job", "d", `{"action":"completed_ok","workflow_job":{},` + repo + `}`, ReasonEventMismatch},
		{"odd action", "pull_request", "d", `{"action":"Opened.Now","number":1,` + repo + `}`, ReasonInvalidPayload},
		{"pr without number", "pull_request", "d", `{"action":"opened","pull_request":{},` + repo + `}`, ReasonMissingPullRequestNumber},
		{"pr number as string", "pull_request", "d", `{"action":"opened","number":"1","pull_request":{},` + repo + `}`, ReasonInvalidPayload},
		{"review without pr", "pull_request_review", "d", `{"action":"submitted","review":{},` + repo + `}`, ReasonMissingPullRequestNumber},
		{"comment without issue", "issue_comment", "d", `{"action":"created","comment":{},` + repo + `}`, ReasonMissingIssueNumber},
		{"comment issue number zero", "issue_comment", "d", `{"action":"created","issue":{"number":0},"comment":{},` + repo + `}`, ReasonMissingIssueNumber},
		{"check suite missing", "check_suite", "d", `{"action":"completed",` + repo + `}`, ReasonEventMismatch},
		{"workflow run missing", "workflow_run", "d", `{"action":"completed",` + repo + `}`, ReasonEventMismatch},
		{"pr object is null", "pull_request", "d", `{"action":"opened","number":1,"pull_request":null,` + repo + `}`, ReasonEventMismatch},
		{"pr object is an array", "pull_request", "d", `{"action":"opened","number":1,"pull_request":[],` + repo + `}`, ReasonEventMismatch},
		{"pr with a review", "pull_request", "d", `{"action":"edited","pull_request":{"number":1},"review":{},` + repo + `}`, ReasonEventMismatch},
		{"review comment as a pr", "pull_request", "d", `{"action":"edited","pull_request":{"number":1},"comment":{},` + repo + `}`, ReasonEventMismatch},
		{"pr action unknown to pull_request", "pull_request", "d", `{"action":"submitted","pull_request":{"number":1},` + repo + `}`, ReasonEventMismatch},
		{"review comment as an issue comment", "issue_comment", "d", `{"action":"created","comment":{},"pull_request":{"number":1},` + repo + `}`, ReasonEventMismatch},
		{"check run as a check suite", "check_suite", "d", `{"action":"completed","check_suite":{},"check_run":{},` + repo + `}`, ReasonEventMismatch},
		{"workflow job as a workflow run", "workflow_run", "d", `{"action":"completed","workflow_run":{},"workflow_job":{},` + repo + `}`, ReasonEventMismatch},
		{"review action unknown", "pull_request_review", "d", `{"action":"closed","review":{},"pull_request":{"number":1},` + repo + `}`, ReasonEventMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := NormalizeWebhook(tt.event, tt.delivery, []byte(tt.body), "", whGoldenNow)
			require.Error(t, err)
			require.Empty(t, evs)
			require.Equal(t, tt.reason, WebhookReason(err))
			require.NotErrorIs(t, err, ErrUnsupportedWebhookEvent)
		})
	}
}

func TestNormalizeWebhookMinimal(t *testing.T) {
	// The owner.login + name fallback, the top-level number fallback, a
	// missing sender (the author acts), and a hostile title.
	body := `{"action":"closed","number":9,"repository":{"name":"r","owner":{"login":"o"}},` +
		`"pull_request":{"merged":true,"title":"line1\nline2","user":{"login":"dependabot[bot]"},"author_association":"NONE"}}`
	evs, err := NormalizeWebhook("pull_request", "abc", []byte(body), "//x/y", whGoldenNow)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	ev := evs[0]
	require.Equal(t, "evt_abc", ev.ID, "the id is the spec's evt_<X-GitHub-Delivery>")
	require.Equal(t, WebhookBodyKey([]byte(body)), ev.DedupKey, "the signed body's digest is the second dedup key")
	require.Equal(t, "//x/y", ev.Source)
	require.Equal(t, "github:o/r#9", ev.Subject)
	require.Equal(t, []string{"github:o/r#9", "github:o/r", "github:o"}, ev.Subjects)
	require.True(t, ev.Terminal)
	require.Equal(t, "PR o/r#9 merged by dependabot[bot]", ev.Summary)
	var data map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	require.Equal(t, "line1 line2", data["title"])
	require.Equal(t, true, data["actorIsBot"])
	require.Equal(t, "NONE", data["authorAssociation"])
}

func TestNormalizeWebhookRepoLevel(t *testing.T) {
	body := `{"action":"completed","repository":{"full_name":"o/r"},"sender":{"login":"u"},` +
		`"check_suite":{"conclusion":"failure","head_branch":"main","pull_requests":[]}}`
	evs, err := NormalizeWebhook("check_suite", "abc", []byte(body), "", whGoldenNow)
	require.NoError(t, err)
	require.Equal(t, "github:o/r", evs[0].Subject)
	require.Equal(t, []string{"github:o/r", "github:o"}, evs[0].Subjects)
	require.Equal(t, "Check suite failure for o/r (main)", evs[0].Summary)
	require.False(t, evs[0].Terminal)
	require.Contains(t, string(evs[0].Data), `"authorAssociation":null`)
}

// TestNormalizeWebhookEventMismatch posts every supported fixture under
// every supported event header: under its own it normalizes, under any
// other it is refused (the header is not signed, so a captured body must
// not pass for another event). Unsupported events' bodies (check_run,
// push, status, ping) pass for none.
func TestNormalizeWebhookEventMismatch(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "webhooks", "*", "*.json"))
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.json") {
			continue
		}
		kind := filepath.Base(filepath.Dir(f))
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, header := range WebhookEvents() {
			evs, err := NormalizeWebhook(header, "d-1", body, "", whGoldenNow)
			if header == kind {
				require.NoError(t, err, f)
				continue
			}
			require.Error(t, err, "%s passed as %s", f, header)
			require.Empty(t, evs)
			require.NotErrorIs(t, err, ErrUnsupportedWebhookEvent)
			if _, supported := whShapes[kind]; supported {
				require.Equal(t, ReasonEventMismatch, WebhookReason(err), "%s as %s", f, header)
			}
			checked++
		}
	}
	require.Greater(t, checked, 250)
}

// TestNormalizeWebhookIDAndBodyKey: the event id is evt_<X-GitHub-Delivery>
// (GitHub's redelivery keeps it); the dedup key is the signed body's
// digest, the same under any delivery id and another for another body.
func TestNormalizeWebhookIDAndBodyKey(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "webhooks", "pull_request", "closed-1.json"))
	require.NoError(t, err)
	a, err := NormalizeWebhook("pull_request", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body, "", whGoldenNow)
	require.NoError(t, err)
	b, err := NormalizeWebhook("pull_request", "0b4cbd5a-1c7a-4bd3-9e5c-6a0e5ec0a001", body, "", whGoldenNow)
	require.NoError(t, err)
	require.Equal(t, "evt_72d3162e-cc78-11e3-81ab-4c9367dc0958", a[0].ID)
	require.Equal(t, "evt_0b4cbd5a-1c7a-4bd3-9e5c-6a0e5ec0a001", b[0].ID)
	require.Equal(t, a[0].DedupKey, b[0].DedupKey, "one signed body, one dedup key")
	require.Regexp(t, `^evt_[0-9a-f]{32}$`, a[0].DedupKey)
	require.Equal(t, []string{a[0].ID, a[0].DedupKey}, a[0].SeenKeys())
	c, err := NormalizeWebhook("pull_request", "72d3162e-cc78-11e3-81ab-4c9367dc0958", append(body, '\n'), "", whGoldenNow)
	require.NoError(t, err)
	require.Equal(t, a[0].ID, c[0].ID, "the delivery id names the event")
	require.NotEqual(t, a[0].DedupKey, c[0].DedupKey, "a different signed body has another key")
}

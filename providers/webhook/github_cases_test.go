package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// The real payloads name Codertocat/Hello-World; the fake holds it.
const (
	helloRepo = "Codertocat/Hello-World"
	forkRepo  = "contributor/Hello-World"
	prHead    = "ec26c3e57ca3a959ca5aad62de7213c562f8c821" // check_suite-fork, PR 2's head
	runHead   = "5779607b49aab1200488439f02372c57b4f75444" // workflow_run-fork
	stHead    = "6113728f27ae82c7b1a177c8d03f9e96e0adf246" // status-failure
)

// hello is a provider with a hook on Codertocat/Hello-World and a signed
// delivery helper.
type hello struct {
	h   *harness
	p   *Provider
	key string
	sec string
}

func newHello(t *testing.T) *hello {
	h := newHarness(t, githubtest.Options{})
	h.gh.AddRepo(helloRepo)
	p := h.provider("node-a")
	hd := h.create(p, "github:"+helloRepo+"#2")
	return &hello{h: h, p: p, key: hd.StateString("hookKey"), sec: h.liveHook(helloRepo).Secret}
}

func (x *hello) deliver(p *Provider, event, guid string, body []byte) ([]sentinel.Event, error) {
	hdr := http.Header{}
	hdr.Set("X-GitHub-Event", event)
	hdr.Set("X-GitHub-Delivery", guid)
	hdr.Set("X-Hub-Signature-256", github.SignWebhook(x.sec, body))
	evs, err := p.ParseInbound(context.Background(), providers.Inbound{HookKey: x.key, Body: body, Header: hdr, Now: x.h.gh.Now()}, sentinel.Handle{})
	x.h.seen(err)
	return evs, err
}

func (x *hello) one(t *testing.T, p *Provider, event, guid string, body []byte) sentinel.Event {
	t.Helper()
	evs, err := x.deliver(p, event, guid, body)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	return evs[0]
}

func dataOf(t *testing.T, ev sentinel.Event) map[string]any {
	t.Helper()
	var d map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &d))
	return d
}

// TestForkPRCIReachesThePR: GitHub sends a fork PR's check suite, workflow
// run, job and commit status with no pull_requests. The provider asks
// GitHub once which open PR has the commit as its head (through the real
// gh), caches the answer, asks again conditionally once it is stale, and
// needs no question for a head a pull_request event told it.
func TestForkPRCIReachesThePR(t *testing.T) {
	x := newHello(t)
	gh := x.h.gh
	gh.OpenPR(helloRepo, githubtest.PR{Number: 2, Head: prHead, HeadRepo: forkRepo})
	gh.OpenPR(helloRepo, githubtest.PR{Number: 3, Head: runHead, HeadRepo: forkRepo})
	gh.OpenPR(helloRepo, githubtest.PR{Number: 4, Head: runHead, HeadRepo: "someone-else/Hello-World"})
	pulls := func(sha string) int { return gh.Count(http.MethodGet, "/repos/"+helloRepo+"/commits/"+sha+"/pulls") }

	ev := x.one(t, x.p, "check_suite", "g-1", payload(t, "check_suite-fork"))
	require.Equal(t, "github:"+helloRepo+"#2", ev.Subject)
	require.Equal(t, "github.check_suite.completed", ev.Type)
	require.Equal(t, 1, pulls(prHead))
	x.one(t, x.p, "check_suite", "g-2", payload(t, "check_suite-fork"))
	require.Equal(t, 1, pulls(prHead), "cached")

	// The run names its head repository: only the PR from that fork.
	ev = x.one(t, x.p, "workflow_run", "g-3", payload(t, "workflow_run-fork"))
	require.Equal(t, "github:"+helloRepo+"#3", ev.Subject)
	require.Equal(t, []string{"github:" + helloRepo + "#3", "github:" + helloRepo, "github:Codertocat"}, ev.Subjects)

	// A status whose commit heads no PR stays at the repository; asked
	// again only once the "none" answer is stale, then conditionally.
	ev = x.one(t, x.p, "status", "g-4", payload(t, "status-failure"))
	require.Equal(t, "github:"+helloRepo, ev.Subject)
	x.one(t, x.p, "status", "g-5", payload(t, "status-failure"))
	require.Equal(t, 1, pulls(stHead))
	gh.Advance(2 * time.Minute)
	gh.ResetLog()
	x.one(t, x.p, "status", "g-6", payload(t, "status-failure"))
	reqs := gh.Requests()
	require.Len(t, reqs, 1)
	require.NotEmpty(t, reqs[0].IfNoneMatch, "asked again conditionally")
	require.Equal(t, http.StatusNotModified, reqs[0].Status)
	require.Zero(t, gh.QuotaUsed(), "a 304 costs no quota")

	// Now the commit heads a new fork PR: its status goes to it.
	gh.OpenPR(helloRepo, githubtest.PR{Number: 5, Head: stHead, HeadRepo: forkRepo})
	gh.Advance(2 * time.Minute)
	ev = x.one(t, x.p, "status", "g-7", payload(t, "status-failure"))
	require.Equal(t, "github:"+helloRepo+"#5", ev.Subject)
	d := dataOf(t, ev)
	require.Equal(t, "failure", d["conclusion"])
	require.Equal(t, "ci/jenkins", d["checks"].([]any)[0].(map[string]any)["name"])
	require.Equal(t, "https://ci.example.test/job/7", d["target_url"])

	// Another node learns PR 2's head from its pull_request event: no
	// question for the check suite that follows.
	q := x.h.provider("node-b")
	gh.ResetLog()
	ev = x.one(t, q, "pull_request", "g-8", payload(t, "pull_request-synchronize-fork"))
	require.Equal(t, forkRepo, dataOf(t, ev)["head_repo"])
	ev = x.one(t, q, "check_suite", "g-9", payload(t, "check_suite-fork"))
	require.Equal(t, "github:"+helloRepo+"#2", ev.Subject)
	require.Zero(t, pulls(prHead))
	gh.Verify(t)
}

// TestForkLookupUnanswered: when GitHub cannot say which PR a fork's
// commit heads (a 5xx), the delivery is refused with 503
// github_lookup_failed, so it fails on GitHub's side and reconciliation
// brings it again; it is never delivered to the wrong subject.
func TestForkLookupUnanswered(t *testing.T) {
	x := newHello(t)
	x.h.gh.OpenPR(helloRepo, githubtest.PR{Number: 2, Head: prHead, HeadRepo: forkRepo})
	x.h.gh.ServerErrors("/repos/"+helloRepo+"/commits/", 0)
	_, err := x.deliver(x.p, "check_suite", "g-1", payload(t, "check_suite-fork"))
	var ie *providers.InboundError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, http.StatusServiceUnavailable, ie.Status)
	require.Equal(t, CodeLookupFailed, ie.Code)
	x.h.gh.ClearFaults()
	ev := x.one(t, x.p, "check_suite", "g-1", payload(t, "check_suite-fork"))
	require.Equal(t, "github:"+helloRepo+"#2", ev.Subject, "the redelivery lands on the PR")
}

// TestReviewCarriesItsInlineCommentsFromGitHub: a submitted review's event
// carries the review's inline comments, listed from GitHub (real gh).
func TestReviewCarriesItsInlineCommentsFromGitHub(t *testing.T) {
	x := newHello(t)
	gh := x.h.gh
	gh.OpenPR(helloRepo, githubtest.PR{Number: 2, Head: prHead})
	rid := gh.AddReview(helloRepo, 2, githubtest.Review{User: "copilot-pull-request-reviewer[bot]", State: "commented",
		Comments: []githubtest.InlineComment{{Path: "README.md", Line: 3, Body: "Typo: recieve"}, {Path: "main.go", Line: 40, Body: "This leaks the file handle."}}})
	var body map[string]any
	require.NoError(t, json.Unmarshal(payload(t, "pull_request_review"), &body))
	body["review"].(map[string]any)["id"] = rid // the payload of the review the fake holds
	raw, err := json.Marshal(body)
	require.NoError(t, err)

	ev := x.one(t, x.p, "pull_request_review", "g-1", raw)
	d := dataOf(t, ev)
	require.EqualValues(t, 2, d["commentsTotal"])
	require.EqualValues(t, 0, d["commentsClipped"])
	cs := d["comments"].([]any)
	require.Equal(t, "Typo: recieve", cs[0].(map[string]any)["body"])
	require.Equal(t, "main.go", cs[1].(map[string]any)["path"])
	require.EqualValues(t, 40, cs[1].(map[string]any)["line"])
	require.Contains(t, ev.Summary, "(2 inline comments)")
	require.Equal(t, 1, gh.Count(http.MethodGet, "/repos/"+helloRepo+"/pulls/2/reviews/"))
	gh.Verify(t)
}

// TestNewGitHubEventsThroughTheProvider: inline comments, threads, jobs,
// merge queue events arrive through the provider as their opt-in types,
// never terminal.
func TestNewGitHubEventsThroughTheProvider(t *testing.T) {
	x := newHello(t)
	for _, c := range []struct {
		event, file, typ, subject string
		check                     func(map[string]any)
	}{
		{"pull_request_review_comment", "pull_request_review_comment", "github.pull_request_review_comment.created", "#2", func(d map[string]any) {
			require.Equal(t, "README.md", d["path"])
			require.EqualValues(t, 265, d["line"])
			require.Equal(t, "@@ -1 +1 @@\n-# Hello-World", d["diffHunk"])
			require.Equal(t, "OWNER", d["authorAssociation"])
		}},
		{"pull_request_review_thread", "pull_request_review_thread", "github.pull_request_review_thread.resolved", "#2", func(d map[string]any) {
			require.EqualValues(t, 1, d["comments"])
		}},
		{"workflow_job", "workflow_job-failure", "github.workflow_job.completed", "", func(d map[string]any) {
			require.Equal(t, "Run yarn run format-check", d["failedStep"])
		}},
		{"merge_group", "merge_group-invalidated", "github.merge_group.destroyed", "#104", func(d map[string]any) {
			require.Equal(t, false, d["merged"])
			require.Equal(t, "invalidated", d["reason"])
		}},
		{"pull_request", "pull_request-dequeued", "github.pull_request.dequeued", "#2", func(d map[string]any) {
			require.Equal(t, "CI_FAILURE", d["reason"])
			require.Equal(t, false, d["merged"])
		}},
	} {
		ev := x.one(t, x.p, c.event, "g-"+c.file, payload(t, c.file))
		require.Equal(t, c.typ, ev.Type, c.file)
		require.False(t, ev.Terminal, c.file)
		require.Contains(t, ev.Subject, c.subject)
		c.check(dataOf(t, ev))
		require.NotContains(t, sentinel.DefaultPRTypes(), c.typ, "opt-in")
	}
}

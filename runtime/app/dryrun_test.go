package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// TestDryRunCountsTheSeededHistoryAndCreatesNothing: two sentinels have
// handled a history; a dry run of a new watch counts the journaled events
// it would have matched (each event once, whatever sentinel received it),
// with examples, and creates nothing: no record, no provider create.
func TestDryRunCountsTheSeededHistoryAndCreatesNothing(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const pr7, pr8 = "github:acme/widgets#7", "github:acme/widgets#8"
	wide := n.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:acme/widgets*", "sessionId": "s1", "provider": "fake", "types": []string{"*"}})
	narrow := n.expect(201, "POST", "/sentinels", map[string]any{"subject": pr7, "sessionId": "s2", "provider": "fake", "types": []string{"github.issue_comment.*"}})
	fk := fakeOf(t, n)
	for i := 0; i < 3; i++ {
		fk.Emit(journalEvent(fmt.Sprintf("evt_ci_%d", i), "github.check_suite.completed", pr7, false))
	}
	fk.Emit(journalEvent("evt_chat_7", "github.issue_comment.created", pr7, false),
		journalEvent("evt_chat_8", "github.issue_comment.created", pr8, false),
		journalEvent("evt_ci_8", "github.check_suite.completed", pr8, false))
	n.app.Loop.PollNow(context.Background())
	waitDecisions(t, n, wide["sentinel"].(map[string]any)["id"].(string), 6)
	waitDecisions(t, n, narrow["sentinel"].(map[string]any)["id"].(string), 4)
	creates, _, _ := fk.Counts()
	before := len(n.expect(200, "GET", "/sentinels", nil)["sentinels"].([]any))

	dry := n.expect(200, "POST", "/sentinels?dryRun=true", map[string]any{"subject": pr7, "sessionId": "s3", "provider": "fake",
		"types": []string{"github.check_suite.*"}})
	require.Equal(t, true, dry["dryRun"])
	require.Equal(t, float64(3), dry["matched"])
	require.Equal(t, float64(6), dry["scanned"], "each journaled event counted once")
	require.Equal(t, "fake", dry["provider"])
	var ids []string
	for _, e := range dry["examples"].([]any) {
		ids = append(ids, e.(map[string]any)["eventId"].(string))
	}
	require.Equal(t, []string{"evt_ci_0", "evt_ci_1", "evt_ci_2"}, ids)
	since, err := time.Parse(time.RFC3339Nano, dry["since"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), since, time.Hour)

	// A repository-wide spec matches both PRs' comments.
	dry = n.expect(200, "POST", "/sentinels?dryRun=true", map[string]any{"subject": "github:acme/widgets", "sessionId": "s3", "provider": "fake",
		"types": []string{"github.issue_comment.created"}})
	require.Equal(t, float64(2), dry["matched"])

	// Validated fully, with the create's codes.
	require.Equal(t, "invalid_subject", n.expect(400, "POST", "/sentinels?dryRun=true", map[string]any{"subject": "nope", "sessionId": "s3"})["error"])
	require.Equal(t, "unknown_provider", n.expect(400, "POST", "/sentinels?dryRun=true", map[string]any{"subject": pr7, "sessionId": "s3", "provider": "nope"})["error"])
	require.Equal(t, "no_caller_identity", n.expect(400, "POST", "/sentinels?dryRun=true", map[string]any{"subject": pr7})["error"])
	require.Equal(t, "invalid_input", n.expect(400, "POST", "/sentinels?dryRun=maybe", map[string]any{"subject": pr7, "sessionId": "s3"})["error"])

	after, _, _ := fk.Counts()
	require.Equal(t, creates, after, "a dry run never calls the provider's create")
	require.Len(t, n.expect(200, "GET", "/sentinels", nil)["sentinels"].([]any), before, "a dry run stores nothing")
}

// A dry run reads at most journal.dry_run_scan journal entries, the
// newest ones, however many the journal holds within journal.max_age
// (it used to read the whole window with an unbounded set of the event
// ids it saw): the answer's since says how far back it looked.
func TestDryRunScansABoundedWindow(t *testing.T) {
	t.Parallel()
	n := startNodeWith(t, func(c *app.Config) { c.Journal.DryRunScan = 20 })
	const pr = "github:acme/widgets#7"
	s := n.expect(201, "POST", "/sentinels", map[string]any{"subject": pr, "sessionId": "s1", "provider": "fake", "types": []string{"*"}})
	fk := fakeOf(t, n)
	for i := 0; i < 40; i++ {
		fk.Emit(journalEvent(fmt.Sprintf("evt_%02d", i), "github.check_suite.completed", pr, false))
	}
	n.app.Loop.PollNow(context.Background())
	waitDecisions(t, n, s["sentinel"].(map[string]any)["id"].(string), 40)

	dry := n.expect(200, "POST", "/sentinels?dryRun=true", map[string]any{"subject": pr, "sessionId": "s3", "provider": "fake",
		"types": []string{"github.check_suite.*"}})
	require.Equal(t, float64(20), dry["scanned"], "the newest 20 entries")
	require.Equal(t, float64(20), dry["matched"])
	ex := dry["examples"].([]any)
	require.Equal(t, "evt_39", ex[len(ex)-1].(map[string]any)["eventId"], "the newest ones")
	require.Equal(t, true, dry["truncated"], "the answer says the window was cut")
}

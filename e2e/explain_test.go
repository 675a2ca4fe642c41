package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
)

// TestExplainOverCLIAndMCP: a delivered and a filtered event, explained
// by `sentinel explain` (table and --json) and the sentinel_explain tool
// over stdio and HTTP.
func TestExplainOverCLIAndMCP(t *testing.T) {
	n := startSurfaceNode(t)
	const subject = "github:acme/widgets#301"
	code, out := n.api("POST", "/sentinels", map[string]any{"subject": subject, "sessionId": "explainer", "provider": "fake",
		"types": []string{"github.check_suite.*"}})
	require.Equal(t, 201, code, "%v", out)
	id := dig(out, "sentinel", "id").(string)
	delivered := n.emit(subject, "github.check_suite.completed")
	filtered := n.emit(subject, "github.issue_comment.created")
	bustest.Eventually(t, 30*time.Second, func() bool {
		n.api("POST", "/sentinels/poll", nil)
		_, page := n.api("GET", "/sentinels/"+id+"/decisions", nil)
		ds, _ := page["decisions"].([]any)
		return len(ds) >= 2
	}, "two decisions journaled")

	res := n.runCLI("", "explain", id)
	require.Equal(t, 0, res.Code, res.Stderr)
	require.Contains(t, res.Stdout, "DECISION")
	lines := strings.Split(res.Stdout, "\n")
	require.True(t, containsLine(lines, delivered, "delivered", "explainer"), res.Stdout)
	require.True(t, containsLine(lines, filtered, "filtered", "clause 0"), res.Stdout)

	res = n.runCLI("", "explain", id, filtered, "--json")
	require.Equal(t, 0, res.Code, res.Stderr)
	story := res.JSON(t)
	require.Equal(t, filtered, dig(story, "event", "eventId"))
	require.Equal(t, "filtered", dig(story, "event", "decisions", 0, "decision"))
	require.Equal(t, "type", dig(story, "event", "decisions", 0, "clauses", 0, "failed"))

	res = n.runCLI("", "explain", id, delivered)
	require.Equal(t, 0, res.Code, res.Stderr)
	require.Contains(t, res.Stdout, "received:")
	require.Contains(t, res.Stdout, "delivered")

	res = n.runCLI("", "explain", id, "evt_never_seen")
	require.Equal(t, 4, res.Code, "an unknown event is not found")
	require.Contains(t, res.Stderr, "journal")

	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			cs := connectMCP(ctx, t, n, transport, protoCurrent, "explain-"+transport, false)
			got, isErr := call(ctx, t, cs, "sentinel_explain", map[string]any{"id": id})
			require.False(t, isErr, "%v", got)
			ds := got["decisions"].([]any)
			require.Len(t, ds, 2)
			require.Equal(t, "delivered", dig(ds, 0, "decision"))
			require.Equal(t, "filtered", dig(ds, 1, "decision"))

			got, isErr = call(ctx, t, cs, "sentinel_explain", map[string]any{"id": id, "eventId": delivered})
			require.False(t, isErr, "%v", got)
			require.Equal(t, "explainer", dig(got, "event", "decisions", 0, "session"))

			got, isErr = call(ctx, t, cs, "sentinel_explain", map[string]any{})
			require.True(t, isErr)
			require.Equal(t, "invalid_input", got["error"])
			got, isErr = call(ctx, t, cs, "sentinel_explain", map[string]any{"id": "sen_nobody"})
			require.True(t, isErr)
			require.Equal(t, "not_found", got["error"])
		})
	}
}

// containsLine reports whether one line holds every part.
func containsLine(lines []string, parts ...string) bool {
	for _, l := range lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestDryRunOverCLIAndMCP: `sentinel watch --dry-run` and sentinel_watch
// with dryRun count the journaled history and create nothing.
func TestDryRunOverCLIAndMCP(t *testing.T) {
	n := startSurfaceNode(t)
	const subject = "github:acme/widgets#302"
	code, out := n.api("POST", "/sentinels", map[string]any{"subject": subject, "sessionId": "history", "provider": "fake", "types": []string{"*"}})
	require.Equal(t, 201, code, "%v", out)
	id := dig(out, "sentinel", "id").(string)
	ci := n.emit(subject, "github.check_suite.completed")
	n.emit(subject, "github.issue_comment.created")
	bustest.Eventually(t, 30*time.Second, func() bool {
		n.api("POST", "/sentinels/poll", nil)
		_, page := n.api("GET", "/sentinels/"+id+"/decisions", nil)
		ds, _ := page["decisions"].([]any)
		return len(ds) >= 2
	}, "the history journaled")
	count := func() int {
		_, list := n.api("GET", "/sentinels", nil)
		return len(list["sentinels"].([]any))
	}
	before := count()

	res := n.runCLI("", "watch", subject, "--session", "planner", "--provider", "fake", "--types", "github.check_suite.*", "--dry-run")
	require.Equal(t, 0, res.Code, res.Stderr)
	require.Contains(t, res.Stdout, "Dry run (nothing created)")
	require.Contains(t, res.Stdout, "would have matched 1 of 2 journaled events")
	require.Contains(t, res.Stdout, ci)

	res = n.runCLI("", "watch", subject, "--session", "planner", "--provider", "fake", "--dry-run", "--json")
	require.Equal(t, 0, res.Code, res.Stderr)
	got := res.JSON(t)
	require.Equal(t, true, got["dryRun"])
	require.Equal(t, float64(2), got["matched"], "the provider's default types (fake: *) apply")

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cs := connectMCP(ctx, t, n, "http", protoCurrent, "planner", false)
	mres, isErr := call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": subject, "provider": "fake", "types": []string{"github.issue_comment.*"}, "dryRun": true})
	require.False(t, isErr, "%v", mres)
	require.Equal(t, true, mres["dryRun"])
	require.Equal(t, float64(1), mres["matched"])
	require.Equal(t, before, count(), "dry runs create nothing")
}

// TestParkedReplayOverCLI: `sentinel parked` lists the stable id;
// `sentinel parked replay` refuses post-mortem noise without --force,
// delivers it with --force, and a second replay delivers nothing more.
func TestParkedReplayOverCLI(t *testing.T) {
	n := startSurfaceNode(t)
	const subject = "github:acme/widgets#303"
	code, out := n.api("POST", "/sentinels", map[string]any{"subject": subject, "sessionId": "replayer", "provider": "fake", "types": []string{"*"}})
	require.Equal(t, 201, code, "%v", out)
	id := dig(out, "sentinel", "id").(string)
	n.emitTerminal(subject, "github.pull_request.closed")
	late := n.emit(subject, "github.check_suite.completed")
	var pid string
	bustest.Eventually(t, 30*time.Second, func() bool {
		n.api("POST", "/sentinels/poll", nil)
		_, p := n.api("GET", "/parked?sentinel="+id, nil)
		pid, _ = dig(p, "parked", 0, "id").(string)
		return pid != ""
	}, "the late event parked")

	res := n.runCLI("", "parked", "--sentinel", id)
	require.Equal(t, 0, res.Code, res.Stderr)
	require.True(t, containsLine(strings.Split(res.Stdout, "\n"), pid, id, "already closed"), res.Stdout)

	res = n.runCLI("", "parked", "replay", pid)
	require.Equal(t, 3, res.Code, res.Stdout)
	require.Contains(t, res.Stderr, "--force")

	res = n.runCLI("", "parked", "replay", pid, "--force")
	require.Equal(t, 0, res.Code, res.Stderr)
	require.True(t, containsLine(strings.Split(res.Stdout, "\n"), pid, late, "delivered", "replayer"), res.Stdout)

	res = n.runCLI("", "parked", "replay", "--sentinel", id, "--force", "--json")
	require.Equal(t, 0, res.Code, res.Stderr)
	require.Equal(t, "duplicate", dig(res.JSON(t), "replays", 0, "decision"), "replaying twice delivers once")

	_, inbox := n.api("GET", "/sessions/replayer/inbox?limit=100", nil)
	var lates int
	for _, m := range inbox["messages"].([]any) {
		if dig(m, "data", "id") == late {
			lates++
		}
	}
	require.Equal(t, 1, lates)
}

// TestLoopShieldThroughTheNode: a sentinel created with --mute-self is not
// woken by self-caused events (journaled as self) but still hears the
// merge; one without it hears everything.
func TestLoopShieldThroughTheNode(t *testing.T) {
	n := startSurfaceNode(t)
	const subject = "github:acme/widgets#304"
	res := n.runCLI("", "watch", subject, "--session", "shielded", "--provider", "fake", "--types", "*", "--mute-self", "--json")
	require.Equal(t, 0, res.Code, res.Stderr)
	muted := res.JSON(t)
	require.Equal(t, true, dig(muted, "sentinel", "muteSelf"))
	id := dig(muted, "sentinel", "id").(string)
	res = n.runCLI("", "watch", subject, "--session", "open", "--provider", "fake", "--types", "*", "--json")
	require.Equal(t, 0, res.Code, res.Stderr)
	require.Equal(t, false, dig(res.JSON(t), "sentinel", "muteSelf"))

	push := n.emitSelf(subject, "github.pull_request.synchronize", false)
	review := n.emit(subject, "github.pull_request_review.submitted")
	merge := n.emitSelf(subject, "github.pull_request.closed", true)
	inbox := func(session string) []string {
		_, out := n.api("GET", "/sessions/"+session+"/inbox?limit=100", nil)
		var ids []string
		for _, m := range out["messages"].([]any) {
			ids = append(ids, dig(m, "data", "id").(string))
		}
		return ids
	}
	bustest.Eventually(t, 30*time.Second, func() bool {
		n.api("POST", "/sentinels/poll", nil)
		return len(inbox("open")) == 3 && len(inbox("shielded")) == 2
	}, "deliveries to both sessions")
	require.Equal(t, []string{review, merge}, inbox("shielded"), "the session's own push is muted, its merge is not")

	res = n.runCLI("", "explain", id, push, "--json")
	require.Equal(t, 0, res.Code, res.Stderr)
	story := res.JSON(t)
	require.Equal(t, true, dig(story, "event", "selfCaused"))
	var mine string
	for _, d := range dig(story, "event", "decisions").([]any) {
		if dig(d, "sentinelId") == id {
			mine = dig(d, "decision").(string)
		}
	}
	require.Equal(t, "self", mine)
}

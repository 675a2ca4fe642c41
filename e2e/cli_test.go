package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Exit codes of the CLI (ingress/api: ExitOK ... ExitUnavailable).
const (
	exitOK          = 0
	exitUsage       = 2
	exitInvalid     = 3
	exitNotFound    = 4
	exitAuth        = 5
	exitUnavailable = 6
)

// TestCLI runs every client verb against a running node, in human and
// --json form, and asserts exit codes and output.
func TestCLI(t *testing.T) {
	n := startSurfaceNode(t)
	ok := func(r cliResult) cliResult {
		t.Helper()
		require.Equalf(t, exitOK, r.Code, "stdout %q stderr %q", r.Stdout, r.Stderr)
		return r
	}
	code := func(want int, r cliResult) cliResult {
		t.Helper()
		require.Equalf(t, want, r.Code, "stdout %q stderr %q", r.Stdout, r.Stderr)
		require.NotEmpty(t, r.Stderr, "a failure explains itself on stderr")
		return r
	}

	// session register / list / show.
	r := ok(n.runCLI("", "session", "register", "cli-s1", "--label", "worker", "--cwd", "/tmp/w", "--notify-cmd", "true {sessionId}"))
	require.Contains(t, r.Stdout, "Registered session cli-s1")
	require.Regexp(t, `label:\s+worker`, r.Stdout)
	j := ok(n.runCLI("", "session", "register", "cli-chief", "--json")).JSON(t)
	require.Equal(t, true, j["ok"])
	require.Equal(t, true, j["created"])
	require.Equal(t, "cli-chief", dig(j, "session", "id"))
	r = ok(n.runCLI("", "session", "list"))
	require.Regexp(t, `(?m)^ID\s+LABEL\s+STATUS\s+PARENT\s+CWD\s+LAST SEEN$`, r.Stdout)
	require.Regexp(t, `(?m)^cli-s1\s+worker\s+running\s+-\s+/tmp/w\s`, r.Stdout)
	j = ok(n.runCLI("", "session", "list", "--json")).JSON(t)
	require.Len(t, j["sessions"], 2)
	r = ok(n.runCLI("", "session", "show", "cli-s1"))
	require.Regexp(t, `hooks:\s+notify`, r.Stdout)
	j = ok(n.runCLI("", "session", "show", "cli-s1", "--json")).JSON(t)
	require.Equal(t, "/tmp/w", dig(j, "session", "cwd"))
	code(exitNotFound, n.runCLI("", "session", "show", "nobody"))
	code(exitUsage, n.runCLI("", "session"))

	// watch pr <url> and watch <subject>; --session defaults to AGENTPROTO_SESSION.
	r = ok(n.runCLI("", "watch", "pr", "https://github.com/acme/widgets/pull/7", "--session", "cli-s1", "--provider", "fake", "--label", "pr7"))
	require.Contains(t, r.Stdout, "Watching github:acme/widgets#7 as sen_")
	require.Regexp(t, `until:\s+subject_terminal`, r.Stdout)
	require.Regexp(t, `types:\s+github.check_suite.completed,`, r.Stdout)
	prID := strings.Fields(strings.SplitN(r.Stdout, " as ", 2)[1])[0]
	r = runBinary(t, n.env("AGENTPROTO_SESSION=cli-s1"), "", "watch", "github:acme/gadgets#9", "--provider", "fake",
		"--types", "github.pull_request.*,github.check_suite.completed", "--urgency", "fyi", "--until", "closed", "--group", "g1", "--json")
	ok(r)
	j = r.JSON(t)
	subjID := dig(j, "sentinel", "id").(string)
	require.Equal(t, "cli-s1", dig(j, "sentinel", "target", "sessionId"))
	require.Equal(t, "fyi", dig(j, "sentinel", "target", "urgency"))
	require.Equal(t, "subject_terminal", dig(j, "sentinel", "until", "kind"))
	require.Equal(t, []any{"github.pull_request.*", "github.check_suite.completed"}, dig(j, "sentinel", "match", 0, "types"))
	require.Equal(t, "g1", dig(j, "sentinel", "group"))
	// Refusals: usage errors exit 2, node refusals 3 with the node's code.
	r = code(exitInvalid, n.runCLI("", "watch", "github:acme/widgets#8", "--provider", "fake"))
	require.Contains(t, r.Stderr, "no_caller_identity")
	require.Contains(t, r.Stderr, "--session")
	r = code(exitInvalid, n.runCLI("", "watch", "github:acme/widgets#8", "--provider", "nope", "--session", "cli-s1", "--json"))
	require.Equal(t, "unknown_provider", r.JSON(t)["error"], "with --json the node's error body is printed")
	r = code(exitInvalid, n.runCLI("", "watch", "pr", "https://example.com/nope", "--session", "cli-s1"))
	require.Contains(t, r.Stderr, "invalid_pr_url")
	r = code(exitInvalid, n.runCLI("", "watch", "github:acme/widgets#8", "--session", "cli-s1", "--provider", "nope"))
	require.Contains(t, r.Stderr, "sentinel adapters")
	code(exitUsage, n.runCLI("", "watch", "github:acme/widgets#8", "--session", "cli-s1", "--until", "tomorrow"))
	code(exitUsage, n.runCLI("", "watch", "github:acme/widgets#8", "--session", "cli-s1", "--urgency", "loud"))
	code(exitUsage, n.runCLI("", "watch", "pr"))
	code(exitUsage, n.runCLI("", "watch", "--bogus-flag"))

	// list.
	r = ok(n.runCLI("", "list"))
	require.Regexp(t, `(?m)^ID\s+PROVIDER\s+STATUS\s+SUBJECT\s+UNTIL\s+TARGET\s+EVENTS\s+LAST EVENT\s+LAST ERROR$`, r.Stdout)
	require.Regexp(t, `(?m)^`+prID+`\s+fake\s+active\s+github:acme/widgets#7\s+subject_terminal\s+cli-s1 \(next-turn\)\s+0\s`, r.Stdout)
	j = ok(n.runCLI("", "list", "--json")).JSON(t)
	require.Len(t, j["sentinels"], 2)

	// status.
	r = ok(n.runCLI("", "status", prID))
	require.Regexp(t, `provider:\s+fake`, r.Stdout)
	require.Regexp(t, `health:\s+ok`, r.Stdout)
	j = ok(n.runCLI("", "status", prID, "--json")).JSON(t)
	require.Equal(t, true, dig(j, "status", "ok"))
	r = code(exitNotFound, n.runCLI("", "status", "sen_00000000000000000000000000"))
	require.Contains(t, r.Stderr, "sentinel list")

	// poll, then inbox (with --wait and --correlation).
	n.emit("github:acme/widgets#7", "github.pull_request.synchronize")
	r = ok(n.runCLI("", "poll"))
	require.Contains(t, r.Stdout, "Polled.")
	j = ok(n.runCLI("", "poll", prID, "--json")).JSON(t)
	require.Equal(t, true, j["polled"])
	require.Equal(t, prID, dig(j, "sentinel", "id"))
	code(exitNotFound, n.runCLI("", "poll", "sen_00000000000000000000000000"))
	r = ok(n.runCLI("", "inbox", "cli-s1", "--wait", "20s", "--correlation", "sentinel:github:acme/widgets#7"))
	require.Regexp(t, `(?m)^SEQ\s+TIME\s+URGENCY\s+KIND\s+FROM\s+CORRELATION\s+TEXT$`, r.Stdout)
	require.Regexp(t, `(?m)^\d+\s+.*next-turn\s+notice\s+system\s+sentinel:github:acme/widgets#7\s`, r.Stdout)
	j = ok(runBinary(t, n.env("AGENTPROTO_SESSION=cli-s1"), "", "inbox", "--json")).JSON(t)
	require.Len(t, j["messages"], 1)
	require.Equal(t, "sentinel:github:acme/widgets#7", dig(j, "messages", 0, "correlationId"))
	start := time.Now()
	r = ok(n.runCLI("", "inbox", "cli-s1", "--wait", "1s", "--correlation", "nothing-here"))
	require.Contains(t, r.Stdout, "No messages for cli-s1 (waited 1s)")
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)
	code(exitUsage, n.runCLI("", "inbox", "cli-s1", "--wait", "90s"))
	code(exitUsage, n.runCLI("", "inbox"))

	// adapters and setup (values never echoed; apiKey=- reads stdin).
	r = ok(n.runCLI("", "adapters"))
	require.Regexp(t, `(?m)^SLUG\s+STATUS\s+VERSION\s+MODES\s+SETUP FIELDS\s+NOTE$`, r.Stdout)
	require.Regexp(t, `(?m)^fake\s+ready\s`, r.Stdout)
	j = ok(n.runCLI("", "adapters", "--json")).JSON(t)
	require.NotEmpty(t, j["adapters"])
	r = code(exitInvalid, n.runCLI("", "setup", "fake", "--field", "x=1"))
	require.Contains(t, r.Stderr, "invalid_setup")
	code(exitNotFound, n.runCLI("", "setup", "nope", "--field", "x=1"))
	code(exitUsage, n.runCLI("", "setup", "agentpush"))
	r = code(exitUsage, n.runCLI("", "setup", "agentpush", "--field", "apiKey"))
	require.Contains(t, r.Stderr, "apiKey=-")
	r = ok(n.runCLI("ap-secret-value\n", "setup", "agentpush", "--field", "apiKey=-", "--field", "baseUrl=http://127.0.0.1:1"))
	require.Contains(t, r.Stdout, "Configured agentpush (stored apiKey, baseUrl)")
	require.NotContains(t, r.Stdout+r.Stderr, "ap-secret-value")
	// A new key alone under the stored baseUrl is refused: it must be restated.
	r = code(exitInvalid, n.runCLI("ap-secret-value\n", "setup", "agentpush", "--field", "apiKey=-"))
	require.Contains(t, r.Stderr, "setup_endpoint_required")
	require.NotContains(t, r.Stdout+r.Stderr, "ap-secret-value")
	r = ok(n.runCLI("ap-secret-value\n", "setup", "agentpush", "--field", "apiKey=-", "--field", "baseUrl=http://127.0.0.1:1", "--json"))
	require.Equal(t, []any{"apiKey", "baseUrl"}, dig(r.JSON(t), "setup", "stored"))
	require.NotContains(t, r.Stdout, "ap-secret-value")

	// follow / follows / unfollow.
	r = ok(n.runCLI("", "follow", "--follower", "cli-chief", "--all", "--events", "exited,crashed", "--key", "cli-k1", "--batch-ms", "0"))
	require.Contains(t, r.Stdout, "Following as fol_")
	require.Regexp(t, `selector:\s+all root-only`, r.Stdout)
	j = ok(runBinary(t, n.env("AGENTPROTO_SESSION=cli-chief"), "", "follow", "--sessions", "cli-s1", "--json")).JSON(t)
	folID := j["id"].(string)
	require.Equal(t, "cli-chief", j["follower"])
	require.Equal(t, []any{"cli-s1"}, dig(j, "selector", "sessionIds"))
	code(exitUsage, n.runCLI("", "follow", "--follower", "cli-chief"))
	r = code(exitNotFound, n.runCLI("", "follow", "--follower", "ghost", "--all"))
	require.Contains(t, r.Stderr, "session register")
	r = ok(n.runCLI("", "follows"))
	require.Regexp(t, `(?m)^ID\s+KEY\s+FOLLOWER\s+SELECTOR\s+EVENTS\s+BATCH MS\s+CREATED$`, r.Stdout)
	require.Regexp(t, `(?m)^fol_\S+\s+cli-k1\s+cli-chief\s+all root-only\s+exited,crashed\s+0\s`, r.Stdout)
	j = ok(n.runCLI("", "follows", "--follower", "cli-chief", "--json")).JSON(t)
	require.Len(t, j["follows"], 2)
	r = ok(n.runCLI("", "unfollow", "cli-k1"))
	require.Contains(t, r.Stdout, "Removed fol_")
	j = ok(n.runCLI("", "unfollow", folID, "--json")).JSON(t)
	require.Equal(t, folID, j["id"])
	code(exitNotFound, n.runCLI("", "unfollow", folID))

	// rm and its aliases.
	r = ok(n.runCLI("", "rm", prID))
	require.Contains(t, r.Stdout, "Removed "+prID)
	code(exitNotFound, n.runCLI("", "delete", prID))
	r = code(exitNotFound, n.runCLI("", "unwatch", prID, "--json"))
	require.Equal(t, "sentinel_not_found", r.JSON(t)["error"])
	j = ok(n.runCLI("", "unwatch", subjID, "--json")).JSON(t)
	require.Equal(t, true, j["removed"])
	r = ok(n.runCLI("", "list"))
	require.Contains(t, r.Stdout, "No sentinels.")

	// parked: a delivery to a forgotten session is parked.
	ok(n.runCLI("", "session", "register", "cli-gone"))
	j = ok(n.runCLI("", "watch", "github:acme/parked#1", "--session", "cli-gone", "--provider", "fake", "--json")).JSON(t)
	parkedID := dig(j, "sentinel", "id").(string)
	r = ok(n.runCLI("", "session", "end", "cli-gone", "--reason", "forgotten"))
	require.Contains(t, r.Stdout, "Ended session cli-gone")
	n.emit("github:acme/parked#1", "github.pull_request.synchronize")
	ok(n.runCLI("", "poll"))
	deadline := time.Now().Add(15 * time.Second)
	for {
		j = ok(n.runCLI("", "parked", "--sentinel", parkedID, "--json")).JSON(t)
		if ps, _ := j["parked"].([]any); len(ps) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.Len(t, j["parked"], 1, "the delivery to a forgotten session is parked")
	require.Equal(t, parkedID, dig(j, "parked", 0, "sentinelId"))
	r = ok(n.runCLI("", "parked", "--sentinel", parkedID))
	require.Regexp(t, `(?m)^ID\s+TIME\s+SENTINEL/FOLLOW\s+REASON\s+TYPE\s+SUBJECT\s+SUMMARY$`, r.Stdout)
	require.Contains(t, r.Stdout, parkedID)
	code(exitUsage, n.runCLI("", "parked", "--limit", "0"))
	j = ok(n.runCLI("", "session", "end", "cli-s1", "--json")).JSON(t)
	require.Equal(t, "ended", dig(j, "session", "status"))
}

// TestCLIExitCodes pins the exit codes of discovery and auth failures.
func TestCLIExitCodes(t *testing.T) {
	n := startSurfaceNode(t)

	// Bad token: 5, naming the fix.
	r := runBinary(t, n.env("AGENTPROTO_TOKEN=wrong"), "", "list")
	require.Equal(t, exitAuth, r.Code, r.Stderr)
	require.Contains(t, r.Stderr, "AGENTPROTO_TOKEN")
	r = runBinary(t, n.env("AGENTPROTO_TOKEN=wrong"), "", "list", "--json")
	require.Equal(t, exitAuth, r.Code)
	require.Equal(t, "unauthorized", r.JSON(t)["error"])

	// No node: 6 (no daemon.json in the home, or nothing listening).
	empty := t.TempDir()
	r = runBinary(t, append(cleanEnv(), "AGENTPROTO_HOME="+empty), "", "list")
	require.Equal(t, exitUnavailable, r.Code, r.Stderr)
	require.Contains(t, r.Stderr, "sentinel serve")
	r = runBinary(t, append(cleanEnv(), "AGENTPROTO_HOME="+empty, "AGENTPROTO_URL=http://127.0.0.1:1"), "", "inbox", "s1")
	require.Equal(t, exitUnavailable, r.Code, r.Stderr)
	require.Contains(t, r.Stderr, "sentinel serve")
	r = runBinary(t, append(cleanEnv(), "AGENTPROTO_HOME="+empty), "", "mcp", "--session", "s1")
	require.Equal(t, exitUnavailable, r.Code, r.Stderr)
	r = runBinary(t, append(cleanEnv(), "AGENTPROTO_HOME="+filepath.Join(empty, "missing")), "", "list", "--url", n.url, "--json")
	require.Equal(t, exitAuth, r.Code, "--url reaches the node but no token is known: %s", r.Stderr)

	// Unknown ids: 4.
	for _, args := range [][]string{
		{"rm", "sen_00000000000000000000000000"},
		{"status", "sen_00000000000000000000000000"},
		{"poll", "sen_00000000000000000000000000"},
		{"unfollow", "fol_00000000000000000000000000"},
		{"session", "show", "nobody"},
		{"session", "end", "nobody"},
		{"setup", "nope", "--field", "a=b"},
	} {
		r = n.runCLI("", args...)
		require.Equalf(t, exitNotFound, r.Code, "%v: %s", args, r.Stderr)
	}
}

package cli_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 29 part 4 through the CLI: watch --batch makes a digest sentinel
// (its view says the window), a burst comes as one inbox message, and a
// window out of range is a usage error naming --batch.
func TestCLIWatchBatchGivesOneDigest(t *testing.T) {
	node := startAppNode(t)
	code, out, errOut := runCLI(t, node, "watch", "github:acme/widgets#7", "--session", "me", "--provider", "fake", "--types", "*", "--batch", "200ms")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Watching github:acme/widgets#7 as sen_")
	require.Regexp(t, `batch:\s+200ms`, out)
	id := senID.FindString(out)

	for i := 0; i < 4; i++ {
		pushFakeEvent(t, node.URL(), id, fmt.Sprintf("evt_cli_%d", i), "github:acme/widgets#7")
	}
	var msgs []map[string]any
	require.Eventually(t, func() bool {
		code, out, _ := runCLI(t, node, "inbox", "me", "--json")
		if code != 0 {
			return false
		}
		var ans struct {
			Messages []map[string]any `json:"messages"`
		}
		if json.Unmarshal([]byte(out), &ans) != nil {
			return false
		}
		msgs = ans.Messages
		return len(msgs) > 0
	}, 30*time.Second, 50*time.Millisecond, "the digest in the inbox")
	require.Len(t, msgs, 1, "one message for the burst")
	require.Contains(t, msgs[0]["text"], "4 events on github:acme/widgets#7")
	data, _ := msgs[0]["data"].(map[string]any)
	require.Len(t, data["events"], 4)

	for _, bad := range []string{"11m", "-1s"} {
		code, _, errOut = runCLI(t, node, "watch", "github:acme/widgets#9", "--session", "me", "--provider", "fake", "--batch="+bad)
		require.Equal(t, 2, code, errOut)
		require.Contains(t, errOut, "--batch must be a duration of whole milliseconds within 0..10m")
	}
}

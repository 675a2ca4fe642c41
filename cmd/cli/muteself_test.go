package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/cmd/cli"
)

// docs/cli.md (#31 item 9): `watch` shows the loop shield as `mute self`,
// `list --json` as `muteSelf`; the `list` table leaves it out.
func TestMuteSelfIsShownByWatchAndListJSON(t *testing.T) {
	node := startAppNode(t)
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", node.URL())
	t.Setenv("AGENTPROTO_TOKEN", node.Token)
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		code := cli.Main(context.Background(), args, cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		require.Equal(t, 0, code, errOut.String())
		return out.String()
	}
	out := run("watch", "fake:o/r#1", "--session", "s1", "--provider", "fake", "--mute-self")
	require.Regexp(t, `(?m)^mute self:\s+on$`, out)
	require.NotContains(t, run("list"), "mute self")
	var listed struct {
		Sentinels []struct {
			MuteSelf bool `json:"muteSelf"`
		} `json:"sentinels"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("list", "--json")), &listed))
	require.Len(t, listed.Sentinels, 1)
	require.True(t, listed.Sentinels[0].MuteSelf)
}

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/cmd/cli"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
)

// adapterTest runs `sentinel adapter test args...` with stdin in and a
// home of its own.
func adapterTest(t *testing.T, env map[string]string, in string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), append([]string{"adapter", "test"}, args...), cli.IO{In: strings.NewReader(in), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// TestAdapterTestVerb: a conforming adapter passes (exit 0, a table of
// checks); a hostile one fails with exit 1 and the reason in the table;
// a slug is found as the node finds it.
func TestAdapterTestVerb(t *testing.T) {
	bin := adaptertest.Build(t)
	dir := t.TempDir()
	good := adaptertest.Install(t, bin, dir, "feed")
	feed := filepath.Join(dir, "feed.jsonl")

	code, out, errOut := adapterTest(t, map[string]string{"FEED_FEED": feed}, "tok-123456\n", good, "--subject", "feed:a", "--field", "token=-")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "handshake (describe)")
	require.Contains(t, out, "status and idempotent cancel")
	require.Contains(t, out, "0 failed")
	require.NotContains(t, out+errOut, "tok-123456")

	code, out, _ = adapterTest(t, map[string]string{"AGENTPROTO_ADAPTERS_PATHS": dir, "AGENTPROTO_ADAPTERS_NO_PATH": "true"}, "",
		"feed", "--subject", "feed:a", "--json")
	require.Equal(t, 1, code, "no token: readiness and polls fail")
	var rep struct {
		Slug    string `json:"slug"`
		Results []struct{ Name, Outcome, Detail string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Equal(t, "feed", rep.Slug)
	outcomes := map[string]string{}
	for _, r := range rep.Results {
		outcomes[r.Name] = r.Outcome
	}
	require.Equal(t, "pass", outcomes["handshake (describe)"])
	require.Equal(t, "fail", outcomes["readiness"])
	require.Equal(t, "fail", outcomes["the first polls establish a baseline"], "polling without a token fails")

	bad := adaptertest.Install(t, bin, dir, "broken")
	code, out, _ = adapterTest(t, map[string]string{"BROKEN_MODE": adaptertest.ModeGarbage}, "", bad, "--subject", "feed:a")
	require.Equal(t, 1, code)
	require.Contains(t, out, "unreadable output")

	code, _, errOut = adapterTest(t, nil, "", "/nowhere/sentinel-adapter-none", "--subject", "feed:a")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "adapter not found")
}

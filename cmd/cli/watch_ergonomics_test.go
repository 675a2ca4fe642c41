package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/cmd/cli"
	"github.com/agentproto/sentinel/runtime/app"
)

// runCLI runs one verb against a real node.
func runCLI(t *testing.T, node *app.App, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", node.URL())
	t.Setenv("AGENTPROTO_TOKEN", node.Token)
	t.Setenv("AGENTPROTO_SESSION", "")
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

var senID = regexp.MustCompile(`sen_[0-9A-Z]+`)

// Issue 29 part 2 through the CLI: the second watch of a PR says it is
// already watched, --allow-duplicate makes another, --key updates.
func TestCLIWatchTwiceSaysAlreadyWatching(t *testing.T) {
	node := startAppNode(t)
	url := "https://github.com/acme/widgets/pull/7"
	code, out, errOut := runCLI(t, node, "watch", "pr", url, "--session", "me", "--provider", "fake")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Watching github:acme/widgets#7 as sen_")
	first := senID.FindString(out)

	code, out, errOut = runCLI(t, node, "watch", "pr", url, "--session", "me", "--provider", "fake")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Already watching github:acme/widgets#7 as "+first)

	code, out, _ = runCLI(t, node, "watch", "pr", url, "--session", "me", "--provider", "fake", "--json")
	require.Equal(t, 0, code)
	var ans map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &ans), out)
	require.Equal(t, true, ans["existing"])

	code, out, _ = runCLI(t, node, "watch", "pr", url, "--session", "me", "--provider", "fake", "--allow-duplicate")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Watching github:acme/widgets#7 as ")
	require.NotEqual(t, first, senID.FindString(out))

	code, out, _ = runCLI(t, node, "watch", "github:acme/widgets#8", "--session", "me", "--provider", "fake", "--key", "k8")
	require.Equal(t, 0, code)
	keyed := senID.FindString(out)
	code, out, _ = runCLI(t, node, "watch", "github:acme/widgets#8", "--session", "me", "--provider", "fake", "--key", "k8", "--urgency", "interrupt")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Updated the watch k8: watching github:acme/widgets#8 as "+keyed)
}

// Issue 29 part 3 through the CLI: local-gh without gh: the watch is
// made (exit 0) and the warning, with its fix, is on stderr.
func TestCLIWatchWarnsWhenTheProviderIsNotReady(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	node, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })

	code, out, errOut := runCLI(t, node, "watch", "pr", "https://github.com/acme/widgets/pull/7", "--session", "me")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Watching github:acme/widgets#7 as sen_")
	require.Contains(t, errOut, "warning: provider_not_ready: local-gh is not ready")
	require.Contains(t, errOut, "fix: ")
	require.NotContains(t, out, "provider_not_ready", "the warning is on stderr")

	code, out, errOut = runCLI(t, node, "watch", "pr", "https://github.com/acme/widgets/pull/8", "--session", "me", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "provider_not_ready")
	require.Contains(t, out, `"warnings"`)
}

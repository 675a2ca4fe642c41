package subscriptions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

// Every delivered event fits the 256 KiB payload cap, and one that had to
// be clipped says so in its data.
func TestClipEventKeepsPayloadsUnderTheCap(t *testing.T) {
	small := &sentinel.Event{ID: "evt_1", Type: "github.check_suite.completed", Subject: "github:o/r#1", Summary: "CI passed", Data: json.RawMessage(`{"n":1}`)}
	raw := clipEvent(small)
	var got map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, map[string]any{"n": float64(1)}, got["data"], "a small event is delivered whole")

	big := *small
	big.Data, _ = json.Marshal(map[string]any{"log": strings.Repeat("x", 600<<10)})
	raw = clipEvent(&big)
	require.LessOrEqual(t, len(raw), MaxEventBytes)
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "evt_1", got["id"])
	require.Equal(t, true, got["data"].(map[string]any)["truncated"])
	require.Contains(t, got["data"].(map[string]any)["reason"], "payload cap")

	huge := big
	huge.Summary = strings.Repeat("s", 300<<10)
	raw = clipEvent(&huge)
	require.LessOrEqual(t, len(raw), MaxEventBytes)
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, true, got["truncated"])
	require.Equal(t, "github:o/r#1", got["subject"])
}

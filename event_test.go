package sentinel_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

func TestEventRoundTripAndValidate(t *testing.T) {
	ref, _ := sentinel.ParseGitHubSubject("github:agentproto/ts#1428")
	ev := sentinel.NewEvent("evt_1", "//agentproto.local/sentinel/local-gh", "github.check_suite.completed", ref.Subject(), ref.Subjects(),
		time.Date(2026, 9, 29, 10, 15, 0, 0, time.UTC), "Check suite success for agentproto/ts#1428", false,
		map[string]any{"action": "completed", "conclusion": "success"})
	require.NoError(t, ev.Validate())
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"time":"2026-09-29T10:15:00.000Z"`)
	require.Contains(t, string(raw), `"specversion":"1.0"`)
	require.NotContains(t, string(raw), "consumerref", "absent extensions are omitted")
	back, err := sentinel.ParseEnvelope(raw, nil)
	require.NoError(t, err)
	require.Equal(t, ev, back)
}

func TestParseEnvelopeNamesEveryBadField(t *testing.T) {
	_, err := sentinel.ParseEnvelope([]byte(`{"specversion":"0.3","id":"","type":"t","subject":"nope","data":[],"subjects":"x","terminal":"no"}`), nil)
	require.Error(t, err)
	for _, f := range []string{"specversion", "id", "data", "subjects", "terminal"} {
		require.Contains(t, err.Error(), f)
	}
	_, err = sentinel.ParseEnvelope([]byte(`not json`), nil)
	require.ErrorIs(t, err, &sentinel.Error{Code: "invalid_envelope"})
}

func TestParseEnvelopeSeqFallbackAndPassThrough(t *testing.T) {
	in := `{"specversion":"1.0","id":"e1","source":"agentpush://github","type":"github.pull_request.closed","subject":"github:a/b#1","time":"2026-01-01T00:00:00Z","datacontenttype":"text/plain","data":{"merged":true},"summary":"s","subjects":["github:a/b#1"],"terminal":true,"consumerref":"agentproto:sentinel:sen_1"}`
	seq := int64(42)
	ev, err := sentinel.ParseEnvelope([]byte(in), &seq)
	require.NoError(t, err)
	require.Equal(t, int64(42), *ev.Seq)
	require.Equal(t, "application/json", ev.DataContentType, "datacontenttype is forced")
	require.Equal(t, "agentproto:sentinel:sen_1", ev.ConsumerRef)
	require.JSONEq(t, `{"merged":true}`, string(ev.Data))
	require.True(t, strings.HasPrefix(ev.Source, "agentpush://"))
}

// TestParseEnvelopeSelfCaused: selfcaused passes through an envelope when
// it is a boolean and is named when it is not.
func TestParseEnvelopeSelfCaused(t *testing.T) {
	base := `{"specversion":"1.0","id":"e1","source":"//t","time":"2026-01-01T00:00:00Z","summary":"s","type":"github.issue_comment.created","subject":"github:a/b#1","data":{},"subjects":["github:a/b#1"],"terminal":false`
	ev, err := sentinel.ParseEnvelope([]byte(base+`,"selfcaused":true}`), nil)
	require.NoError(t, err)
	require.True(t, ev.SelfCaused)
	ev, err = sentinel.ParseEnvelope([]byte(base+`}`), nil)
	require.NoError(t, err)
	require.False(t, ev.SelfCaused)
	_, err = sentinel.ParseEnvelope([]byte(base+`,"selfcaused":"yes"}`), nil)
	require.ErrorContains(t, err, "selfcaused")
	raw, err := json.Marshal(sentinel.Event{SelfCaused: true})
	require.NoError(t, err)
	require.Contains(t, string(raw), `"selfcaused":true`)
}

package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
)

func msg(id, to, corr string) sentinel.Message {
	return sentinel.Message{ID: id, Ts: "2026-11-01T10:00:00.000Z", To: to, From: sentinel.MessageFrom{Relation: inbox.RelationSystem},
		Kind: inbox.KindNotice, Urgency: sentinel.UrgencyNextTurn, CorrelationID: corr, Text: "hello " + id}
}

func TestAppendIsIdempotentAndReadPages(t *testing.T) {
	env := bustest.Start(t)
	in := openInbox(t, env)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		_, dup, err := in.Append(ctx, msg(fmt.Sprintf("msg_%d", i), "s1", fmt.Sprintf("c%d", i%2)))
		require.NoError(t, err)
		require.False(t, dup)
	}
	stored, dup, err := in.Append(ctx, msg("msg_2", "s1", "c0"))
	require.NoError(t, err)
	require.True(t, dup, "a second append of one id is refused")
	_, _, err = in.Append(ctx, msg("msg_x", "s2", ""))
	require.NoError(t, err)

	all, next, err := in.Read(ctx, inbox.Query{SessionID: "s1"})
	require.NoError(t, err)
	require.Len(t, all, 5, "other sessions' messages are not read")
	require.Equal(t, stored.Seq, all[2].Seq)
	page, next2, err := in.Read(ctx, inbox.Query{SessionID: "s1", Limit: 2})
	require.NoError(t, err)
	require.Len(t, page, 2)
	rest, _, err := in.Read(ctx, inbox.Query{SessionID: "s1", After: next2})
	require.NoError(t, err)
	require.Len(t, rest, 3)
	require.Equal(t, "msg_2", rest[0].ID)
	none, after, err := in.Read(ctx, inbox.Query{SessionID: "s1", After: next})
	require.NoError(t, err)
	require.Empty(t, none)
	require.Equal(t, next, after)
	corr, _, err := in.Read(ctx, inbox.Query{SessionID: "s1", CorrelationID: "c1"})
	require.NoError(t, err)
	require.Len(t, corr, 2)
}

func TestWaitReturnsAtOnceOrWakes(t *testing.T) {
	env := bustest.Start(t)
	in := openInbox(t, env)
	ctx := context.Background()
	_, _, err := in.Append(ctx, msg("msg_a", "s1", "x"))
	require.NoError(t, err)
	got, _, err := in.Wait(ctx, inbox.Query{SessionID: "s1", CorrelationID: "x"}, 30*time.Second)
	require.NoError(t, err)
	require.Len(t, got, 1, "a match already there returns at once")

	done := make(chan []sentinel.Message, 1)
	go func() {
		m, _, _ := in.Wait(ctx, inbox.Query{SessionID: "s1", CorrelationID: "y"}, 30*time.Second)
		done <- m
	}()
	// Messages that do not match keep it waiting; the match wakes it.
	_, _, err = in.Append(ctx, msg("msg_b", "s1", "x"))
	require.NoError(t, err)
	_, _, err = in.Append(ctx, msg("msg_c", "s1", "y"))
	require.NoError(t, err)
	select {
	case m := <-done:
		require.Len(t, m, 1)
		require.Equal(t, "msg_c", m[0].ID)
	case <-time.After(20 * time.Second):
		t.Fatal("wait did not wake")
	}
	m, _, err := in.Wait(ctx, inbox.Query{SessionID: "s1", CorrelationID: "never"}, 50*time.Millisecond)
	require.NoError(t, err)
	require.Empty(t, m, "a wait times out empty")
}

func TestAppendValidates(t *testing.T) {
	env := bustest.Start(t)
	in := openInbox(t, env)
	bad := []sentinel.Message{
		func() sentinel.Message { m := msg("msg_1", "a.b", ""); return m }(),
		func() sentinel.Message { m := msg("bad id!", "s1", ""); return m }(),
		func() sentinel.Message { m := msg("msg_1", "s1", ""); m.Urgency = "now"; return m }(),
		func() sentinel.Message { m := msg("msg_1", "s1", ""); m.Kind = "chat"; return m }(),
		func() sentinel.Message {
			m := msg("msg_1", "s1", "")
			m.Data = json.RawMessage(`"` + strings.Repeat("x", 20000) + `"`)
			return m
		}(),
	}
	for i, m := range bad {
		_, _, err := in.Append(context.Background(), m)
		require.Error(t, err, "case %d", i)
	}
}

func TestSentinelMessageTrimsToTheCap(t *testing.T) {
	ref, _ := sentinel.ParseGitHubSubject("github:acme/widgets#7")
	small := sentinel.NewEvent("evt_1", "src", "github.pull_request.closed", ref.Subject(), ref.Subjects(), time.Unix(0, 0), "PR acme/widgets#7 merged", true, map[string]any{"merged": true})
	m := inbox.SentinelMessage("sen_1", "local-gh", "s1", sentinel.UrgencySteer, &small, "ts")
	require.Equal(t, "[github] PR acme/widgets#7 merged", m.Text)
	require.Equal(t, "sentinel:github:acme/widgets#7", m.CorrelationID)
	require.Equal(t, sentinel.UrgencySteer, m.Urgency)
	require.Equal(t, inbox.EventMessageID("s1", "evt_1", ""), m.ID)
	var back sentinel.Event
	require.NoError(t, json.Unmarshal(m.Data, &back))
	require.Equal(t, small.ID, back.ID)

	big := small
	big.Data = json.RawMessage(`{"blob":"` + strings.Repeat("x", 20000) + `"}`)
	m = inbox.SentinelMessage("sen_1", "local-gh", "s1", sentinel.UrgencyNextTurn, &big, "ts")
	require.LessOrEqual(t, len(m.Data), inbox.MaxDataBytes)
	require.Contains(t, string(m.Data), `"data":{"truncated":true}`, "step 2: the projection is dropped")

	huge := small
	huge.Summary = strings.Repeat("s", 20000)
	m = inbox.SentinelMessage("sen_1", "local-gh", "s1", sentinel.UrgencyNextTurn, &huge, "ts")
	require.LessOrEqual(t, len(m.Data), inbox.MaxDataBytes)
	var stub map[string]any
	require.NoError(t, json.Unmarshal(m.Data, &stub))
	require.Equal(t, true, stub["truncated"], "step 3: an identity stub")
	require.Equal(t, "evt_1", stub["id"])
}

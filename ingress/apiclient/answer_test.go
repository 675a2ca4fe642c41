package apiclient_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// A typed call through KeepAnswer returns its typed result and keeps the
// node's answer as sent, fields the result drops included; an error
// answer keeps nothing; the copy moves the shared current node.
func TestKeepAnswerKeepsTheNodesAnswer(t *testing.T) {
	body := `{"ok":true,"sentinel":{"id":"sen_1","status":"active"},"existing":true,"extra":"kept"}`
	c := serve(t, 200, body, nil)
	var raw json.RawMessage
	v, err := apiclient.Sentinels{C: c.KeepAnswer(&raw)}.Create(context.Background(), sentinel.WatchRequest{Subject: "github:o/r"})
	require.NoError(t, err)
	require.Equal(t, "sen_1", v.ID)
	require.JSONEq(t, body, string(raw))

	failing := serve(t, 404, `{"error":"sentinel_not_found","message":"gone"}`, nil)
	var none json.RawMessage
	require.Error(t, apiclient.Sentinels{C: failing.KeepAnswer(&none)}.Remove(context.Background(), "sen_x"))
	require.Nil(t, none)

	dead := newTestNode(t, answer(503, `{"error":"not_ready"}`))
	live := newTestNode(t, answer(200, `{"ok":true,"sessions":[]}`))
	nodes := apiclient.NewNodes([]string{dead.URL, live.URL}, "tok")
	_, err = apiclient.Sessions{C: nodes.KeepAnswer(&raw)}.List(context.Background())
	require.NoError(t, err)
	require.JSONEq(t, `{"ok":true,"sessions":[]}`, string(raw))
	_, err = apiclient.Sessions{C: nodes}.List(context.Background())
	require.NoError(t, err)
	require.Len(t, dead.saw(), 1, "the copy's failover made the live node the current one for the original")
}

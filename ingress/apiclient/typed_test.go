package apiclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

func serve(t *testing.T, status int, body string, seen *string) *apiclient.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			*seen = r.Method + " " + r.URL.RequestURI()
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return apiclient.New(srv.URL, "tok")
}

func TestErrorsBecomeDomainErrors(t *testing.T) {
	c := serve(t, 404, `{"error":"sentinel_not_found","message":"sentinel not found"}`, nil)
	err := apiclient.Sentinels{C: c}.Remove(context.Background(), "sen_x")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeSentinelNotFound})
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae, "the HTTP answer stays reachable")
	require.Equal(t, 404, ae.Status)
	require.Equal(t, "sentinel not found", err.Error())

	down := apiclient.New("http://127.0.0.1:1", "tok")
	_, err = apiclient.Sentinels{C: down}.List(context.Background())
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeUnavailable})
	require.ErrorIs(t, err, apiclient.ErrUnreachable)
	require.Contains(t, err.Error(), "sentinel serve")

	require.NoError(t, apiclient.AsDomain(nil))
	require.ErrorIs(t, apiclient.AsDomain(errors.New("boom")), &sentinel.Error{Code: sentinel.CodeInternal})
}

func TestCreatedComesFromTheStatus(t *testing.T) {
	var seen string
	c := serve(t, 201, `{"id":"fol_1","follower":"chief","selector":{"all":true},"events":[],"batchMs":0}`, &seen)
	f, created, err := apiclient.Follows{C: c}.Upsert(context.Background(), sentinel.FollowRequest{Selector: sentinel.FollowSelector{All: true}}, "chief")
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "fol_1", f.ID)
	require.Equal(t, "POST /follows", seen)

	c = serve(t, 200, `{"ok":true,"created":false,"session":{"id":"s1","status":"running"}}`, &seen)
	s, created, err := apiclient.Sessions{C: c}.Register(context.Background(), sentinel.RegisterSession{ID: "s1"})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, "s1", s.ID)

	_, _, err = apiclient.Follows{C: c}.Upsert(context.Background(), sentinel.FollowRequest{}, "")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeNoFollower})
}

func TestWatchFillsTheCallerAndInboxPaths(t *testing.T) {
	var seen string
	c := serve(t, 201, `{"ok":true,"sentinel":{"id":"sen_1"}}`, &seen)
	_, err := apiclient.Sentinels{C: c}.Watch(context.Background(), sentinel.WatchRequest{Subject: "github:o/r#1"}, "")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeNoCallerIdentity})
	v, err := apiclient.Sentinels{C: c}.Watch(context.Background(), sentinel.WatchRequest{Subject: "github:o/r#1"}, "s1")
	require.NoError(t, err)
	require.Equal(t, "sen_1", v.ID)

	after := uint64(7)
	require.Equal(t, "/sessions/s1/inbox?after=7&correlationId=c&limit=5&wait=2.5",
		apiclient.InboxPath(sentinel.InboxQuery{SessionID: "s1", After: &after, Limit: 5, CorrelationID: "c"}, 2500*time.Millisecond))

	c = serve(t, 200, `{"ok":true,"messages":[],"next":7,"timedOut":true}`, &seen)
	page, err := apiclient.Inboxes{C: c}.Wait(context.Background(), sentinel.InboxQuery{SessionID: "s1", Ack: true}, time.Second)
	require.NoError(t, err)
	require.True(t, page.TimedOut)
	require.Equal(t, "GET /sessions/s1/inbox?ack=true&wait=1", seen)
	_, err = apiclient.Inboxes{C: c}.Wait(context.Background(), sentinel.InboxQuery{SessionID: "s1"}, time.Minute)
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidInput})
}

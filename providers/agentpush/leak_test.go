package agentpush_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush"
)

// TestKeyNeverLeaks drives every operation through success and failure and
// scans every log line, handle, error, health, readiness and poll result
// for the API key.
func TestKeyNeverLeaks(t *testing.T) {
	f := newFixture(t, map[string]string{"delivery": "push"})
	f.url = providers.PublicURL{URL: "https://sentinel.example", Stable: true}
	key := f.srv.Key()
	ctx := context.Background()
	var seen []any
	record := func(vs ...any) { seen = append(seen, vs...) }

	pollH := f.create(t, "github:acme/api#7")
	pushH, err := f.p.Create(ctx, providers.CreateRequest{SentinelID: "sen_2", Spec: spec(sentinel.Clause{Subject: "linear:ENG-1"}),
		Delivery: f.p.PreferredDelivery(ctx, 15000)})
	require.NoError(t, err)
	record(pollH, pushH, f.p.Readiness(ctx), f.p.SetupFields(), f.p.Capabilities(), f.p.Info())

	f.srv.Enqueue(pollH.RemoteID, event("ev-1"))
	f.srv.EnqueueRaw(pollH.RemoteID, json.RawMessage(`{"bogus":true}`))
	res, err := f.p.Poll(ctx, pollH, 10)
	record(res, err, f.p.Ack(ctx, pollH, res.Cursor))
	hl, err := f.p.Status(ctx, pollH)
	record(hl, err)
	h, err := f.p.Attach(ctx, pushH, providers.Delivery{Mode: providers.ModePush, CallbackURL: "https://moved.example"})
	record(h, err)

	for _, fail := range []func(){
		func() { f.srv.FailAuth(http.StatusUnauthorized) },
		func() { f.srv.FailAuth(http.StatusForbidden) },
		func() { f.srv.FailAuth(0); f.srv.FailNext(http.StatusInternalServerError, 10) },
		func() { f.srv.FailNext(0, 0); f.srv.Delete(pollH.RemoteID) },
	} {
		fail()
		_, err := f.p.Create(ctx, providers.CreateRequest{SentinelID: "sen_3", Spec: spec(sentinel.Clause{Subject: "github:acme/api"})})
		record(err)
		res, err := f.p.Poll(ctx, pollH, 10)
		record(res, err)
		h, err := f.p.Attach(ctx, pollH, providers.Delivery{Mode: providers.ModePoll})
		record(h, err)
		hl, err := f.p.Status(ctx, pollH)
		record(hl, err, f.p.Cancel(ctx, pollH), f.p.Ack(ctx, pollH, "99"))
	}

	// A misbehaving server that echoes the Authorization header back.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"error":"bad upstream for %s"}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(echo.Close)
	ep := agentpush.New(agentpush.Config{Creds: &creds{fields: map[string]string{"apiKey": key, "baseUrl": echo.URL}},
		Log: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	_, err = ep.Create(ctx, providers.CreateRequest{SentinelID: "sen_4", Spec: spec(sentinel.Clause{Subject: "github:acme/api"})})
	require.ErrorContains(t, err, "Bearer [redacted]")
	record(err)
	hl, err = ep.Status(ctx, sentinel.Handle{Provider: agentpush.Slug, RemoteID: "sub_1"})
	record(hl, err)
	_, err = ep.Attach(ctx, sentinel.Handle{Provider: agentpush.Slug, RemoteID: "sub_1"}, providers.Delivery{})
	record(err)

	require.NotEmpty(t, f.logs.String())
	require.NotContains(t, f.logs.String(), key, "log output")
	require.NotContains(t, f.logs.String(), pushH.StateString("callbackSecret"), "log output")
	require.NotContains(t, f.logs.String(), pushH.StateString("hookKey"), "log output")
	for i, v := range seen {
		require.NotContains(t, render(v), key, "value %d: %s", i, render(v))
	}
}

// render is every string form of v: its JSON, %+v and, for errors, the
// message.
func render(v any) string {
	var b strings.Builder
	raw, _ := json.Marshal(v)
	b.Write(raw)
	fmt.Fprintf(&b, " %+v %#v", v, v)
	if err, ok := v.(error); ok && err != nil {
		b.WriteString(" " + err.Error())
	}
	return b.String()
}

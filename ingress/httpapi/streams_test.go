package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

func TestStreamsAndLongPollsAreCapped(t *testing.T) {
	in := newMemInboxes()
	r := chi.NewRouter()
	httpapi.InboxReadRoutes(r, in, httpapi.StreamConfig{Heartbeat: time.Second, MaxStreams: 3, MaxStreamsPerSession: 2})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(path string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	refused := func(path, why string) {
		t.Helper()
		resp := open(path)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, path)
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Equal(t, "too_many_streams", out["error"])
		require.Contains(t, out["message"], why)
	}
	longPoll := func(session string) <-chan int {
		done := make(chan int, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sessions/"+session+"/inbox?after=0&wait=30s", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			done <- resp.StatusCode
		}()
		return done
	}

	// Two long-polls of s1 fill its share.
	polls := []<-chan int{longPoll("s1"), longPoll("s1")}
	require.Eventually(t, func() bool { return in.waits.Load() == 2 }, 10*time.Second, time.Millisecond)
	refused("/sessions/s1/inbox?after=0&wait=30s", "max_streams_per_session")
	refused("/sessions/s1/inbox/stream", "max_streams_per_session")
	// A read without wait is never counted.
	require.Equal(t, http.StatusOK, open("/sessions/s1/inbox?after=0").StatusCode)

	// A stream of s2 takes the last slot of the node.
	s2 := open("/sessions/s2/inbox/stream")
	require.Equal(t, http.StatusOK, s2.StatusCode)
	line, err := bufio.NewReader(s2.Body).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": sentinel inbox stream\n", line)
	refused("/sessions/s3/inbox/stream", "max_streams")
	refused("/sessions/s3/inbox?wait=5s", "max_streams")

	// The long-polls end (a message arrives): their slots are free again.
	_, err = in.Send(ctx, "s1", sentinel.SendMessage{Text: "hi"}, "")
	require.NoError(t, err)
	for _, p := range polls {
		require.Equal(t, http.StatusOK, <-p)
	}
	s1 := open("/sessions/s1/inbox/stream")
	require.Equal(t, http.StatusOK, s1.StatusCode)
	// And a closed stream gives its slot back.
	_ = s2.Body.Close()
	require.Eventually(t, func() bool {
		resp := open("/sessions/s3/inbox/stream")
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond)
}

package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
)

// closedURL is a node that is gone (connection refused).
func closedURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

// droppingNode reads each request, then closes the connection without an
// answer; it counts the requests it saw.
func droppingNode(t *testing.T) (string, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

const listBody = `{"ok":true,"sentinels":[{"id":"sen_1","provider":"fake","status":"active","match":[{"subject":"github:o/r#1"}],"until":{"kind":"never"},"target":{"kind":"session","sessionId":"s1","urgency":"fyi"},"createdTs":1,"eventCount":0}]}`

func TestURLListFailsOver(t *testing.T) {
	live := &fakeNode{status: 200, body: listBody}
	liveURL := live.start(t)
	code, out, errOut := runVerb(t, "", "", "list", "--url", closedURL(t)+","+liveURL)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "sen_1")
	require.Equal(t, "GET /sentinels?limit=500", live.method+" "+live.path)

	// AGENTPROTO_URL takes the same list; blanks and a trailing slash are trimmed.
	live.method = ""
	code, out, errOut = runVerb(t, " "+closedURL(t)+" , "+liveURL+"/ ", "", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "sen_1")
	require.Equal(t, "GET", live.method)
}

func TestURLListWrites(t *testing.T) {
	created := `{"ok":true,"sentinel":{"id":"sen_2","provider":"fake","status":"active","match":[{"subject":"github:o/r#1"}],"until":{"kind":"never"},"target":{"kind":"session","sessionId":"s1","urgency":"fyi"},"createdTs":1,"eventCount":0}}`
	watch := []string{"watch", "github:o/r#1", "--session", "s1", "--url"}

	// A 503 means the node did not do it: the next node gets the write.
	busy := &fakeNode{status: 503, body: `{"error":"unavailable","message":"no quorum"}`}
	live := &fakeNode{status: 201, body: created}
	code, out, errOut := runVerb(t, "", "", append(watch, busy.start(t)+","+live.start(t))...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "sen_2")
	require.Equal(t, "POST", busy.method)
	require.Equal(t, "POST /sentinels", live.method+" "+live.path)

	// An answer lost after the request was sent: never a second sentinel.
	dropURL, dropped := droppingNode(t)
	live = &fakeNode{status: 201, body: created}
	code, _, errOut = runVerb(t, "", "", append(watch, dropURL+","+live.start(t))...)
	require.Equal(t, api.ExitOutcomeUnknown, code, errOut)
	require.Equal(t, int32(1), dropped.Load())
	require.Empty(t, live.method, "the second node saw no POST")
	require.Contains(t, errOut, "answer was lost")
	require.Contains(t, errOut, "POST /sentinels at "+dropURL)
	require.Contains(t, errOut, "check with `sentinel list`")

	// Every node down: exit 6 naming each.
	d1, d2 := closedURL(t), closedURL(t)
	code, _, errOut = runVerb(t, "", "", append(watch, d1+","+d2)...)
	require.Equal(t, api.ExitUnavailable, code)
	require.Contains(t, errOut, d1)
	require.Contains(t, errOut, d2)
	require.Contains(t, errOut, "sentinel serve")
}

func TestURLListValidation(t *testing.T) {
	cases := []struct {
		name, list, want, secret string
	}{
		{name: "empty entry", list: "http://127.0.0.1:1,,http://127.0.0.1:2", want: "--url entry 2 is empty"},
		{name: "trailing comma", list: "http://127.0.0.1:1,", want: "--url entry 2 is empty"},
		{name: "scheme", list: "127.0.0.1:7717", want: "--url entry 1 must start with http:// or https://"},
		{name: "host:port", list: "localhost:7717", want: "--url entry 1 must start with http:// or https://"},
		{name: "other scheme", list: "http://127.0.0.1:1,ftp://h", want: "--url entry 2 must start with http:// or https://"},
		{name: "no host", list: "http://", want: "--url entry 1 has no host"},
		{name: "credentials", list: "https://admin:hunter2-secret@h", want: "carries credentials", secret: "hunter2-secret"},
		{name: "query", list: "http://h:1/?token=q-secret", want: "must have no query", secret: "q-secret"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runVerb(t, "", "", "list", "--url", tc.list)
			require.Equal(t, api.ExitUsage, code, errOut)
			require.Contains(t, errOut, tc.want)
			if tc.secret != "" {
				require.NotContains(t, out+errOut, tc.secret)
			}
		})
	}
	got, err := parseNodeURLs("--url", "http://a:1/, http://a:1 ,https://b/prefix/")
	require.NoError(t, err)
	require.Equal(t, []string{"http://a:1", "https://b/prefix"}, got, "trimmed, deduplicated, a path prefix kept")
}

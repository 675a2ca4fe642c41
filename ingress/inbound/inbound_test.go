package inbound

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func post(key string, length int, extra ...string) string {
	h := fmt.Sprintf("POST /inbound/sentinel-%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d", key, length)
	for _, e := range extra {
		h += "\r\n" + e
	}
	return h
}

func TestUnknownHooksAreRefusedBeforeTheBody(t *testing.T) {
	f, addr := serve(t, New(nil))
	cases := []struct {
		name, key, extra string
		lookedUp         bool
	}{
		{"unknown key, 25 MiB declared, a few bytes sent", "ffffffffffffffffffffffffffffffff", "", true},
		{"unknown key, the client waits for 100-continue", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "Expect: 100-continue", true},
		{"not a key's shape", "a.b", "", false},
		{"too long for a key", strings.Repeat("a", 129), "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var extra []string
			body := strings.Repeat("x", 16)
			if tc.extra != "" {
				extra, body = append(extra, tc.extra), ""
			}
			// The body never finishes (and with 100-continue never starts):
			// the 404 must not wait for it.
			c, br := send(t, addr, post(tc.key, 25<<20, extra...), body)
			status, raw := answer(t, c, br, 5*time.Second)
			require.Equal(t, http.StatusNotFound, status, raw)
			require.JSONEq(t, `{"error":"not_found"}`, raw, "the 404 echoes nothing")
			looked, bodies := f.calls()
			require.Empty(t, bodies, "nothing reached the runtime")
			require.Equal(t, tc.lookedUp, len(looked) > 0 && looked[len(looked)-1] == tc.key, "the key is looked up only when well-formed")
		})
	}
}

func TestOverCapBodiesAreRefusedFromTheirLength(t *testing.T) {
	f, addr := serve(t, New(nil, WithMaxBody(1<<10)))
	c, br := send(t, addr, post(knownKey, 1<<10+1), "")
	status, raw := answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, raw)
	require.JSONEq(t, `{"error":"body_too_large"}`, raw)
	_, bodies := f.calls()
	require.Empty(t, bodies)
}

func TestKnownHooksGetTheirBody(t *testing.T) {
	f, addr := serve(t, New(nil))
	c, br := send(t, addr, post(knownKey, 11), `{"ping":1}`+"\n")
	status, raw := answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusOK, status, raw)
	_, bodies := f.calls()
	require.Equal(t, [][]byte{[]byte(`{"ping":1}` + "\n")}, bodies)
}

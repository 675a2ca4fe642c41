package inbound

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress"
)

// The budget counts the body bytes that arrived, not those a request
// declares: a sender that declares a large body and trickles it holds
// only what it sent.
func TestBodyBytesInFlightAreCapped(t *testing.T) {
	h := New(nil, WithMaxBody(1000), WithMaxInFlight(1000))
	f, addr := serve(t, h)
	// A first sender declares 800 bytes and sends 10: only its 10 are held.
	first, firstBr := send(t, addr, post(knownKey, 800), strings.Repeat("x", 10))
	require.Eventually(t, func() bool { return h.budget.inUse() == 10 }, 5*time.Second, time.Millisecond)

	// A second declared body that fits beside what arrived passes.
	c, br := send(t, addr, post(knownKey, 300), strings.Repeat("z", 300))
	status, raw := answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusOK, status, raw)
	require.Equal(t, int64(10), h.budget.inUse())
	// One whose bytes no longer fit is refused once they do not, declared
	// or chunked, and gives back what it took.
	c, br = send(t, addr, post(knownKey, 1000), strings.Repeat("z", 1000))
	status, raw = answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusServiceUnavailable, status, raw)
	require.JSONEq(t, `{"error":"inbound_busy"}`, raw)
	chunked := fmt.Sprintf("POST /inbound/sentinel-%s HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked", knownKey)
	c, br = send(t, addr, chunked, fmt.Sprintf("%x\r\n%s\r\n", 1000, strings.Repeat("y", 1000)))
	status, raw = answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusServiceUnavailable, status, raw)
	require.Equal(t, int64(10), h.budget.inUse(), "a refused body gives back what it took")

	// The first body completes; its bytes are given back with the answer.
	_, err := first.Write([]byte(strings.Repeat("x", 790)))
	require.NoError(t, err)
	status, raw = answer(t, first, firstBr, 5*time.Second)
	require.Equal(t, http.StatusOK, status, raw)
	require.Zero(t, h.budget.inUse())
	// A chunked body that fills the whole budget exactly still passes.
	c, br = send(t, addr, chunked, fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 1000, strings.Repeat("y", 1000)))
	status, raw = answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusOK, status, raw)
	_, bodies := f.calls()
	require.Len(t, bodies, 3)
	require.Len(t, bodies[1], 800)
	require.Len(t, bodies[2], 1000)
	require.Zero(t, h.budget.inUse())
}

// The attack of the review: slow senders declare the largest body and
// trickle a byte each. Their declared bytes used to hold the whole budget,
// so every real delivery answered 503 inbound_busy until their read
// deadline.
func TestSlowDeclaredBodiesDoNotHoldTheBudget(t *testing.T) {
	h := New(nil, WithMaxBody(1000), WithMaxInFlight(2500))
	_, addr := serve(t, h)
	for i := 0; i < 3; i++ {
		send(t, addr, post(knownKey, 1000), "x")
	}
	require.Eventually(t, func() bool { return h.budget.inUse() == 3 }, 5*time.Second, time.Millisecond)
	c, br := send(t, addr, post(knownKey, 1000), strings.Repeat("y", 1000))
	status, raw := answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusOK, status, raw)
}

func TestSlowBodiesAreCut(t *testing.T) {
	_, addr := serve(t, New(nil), ingress.BodyDeadline(300*time.Millisecond))
	c, br := send(t, addr, post(knownKey, 100), `{"a":`)
	status, raw := answer(t, c, br, 10*time.Second)
	require.Equal(t, http.StatusRequestTimeout, status, raw)
	require.JSONEq(t, `{"error":"body_timeout"}`, raw)
}

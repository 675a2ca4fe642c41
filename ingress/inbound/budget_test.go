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

func TestBodyBytesInFlightAreCapped(t *testing.T) {
	h := &Handler{MaxBody: 1000, MaxInFlight: 1000}
	f, addr := serve(t, h)
	// A first sender declares 800 bytes and sends 10: its 800 are held.
	first, firstBr := send(t, addr, post(knownKey, 800), strings.Repeat("x", 10))
	require.Eventually(t, func() bool { return h.budget.inUse() == 800 }, 5*time.Second, time.Millisecond)

	// A second declared body that does not fit is refused before it is read.
	c, br := send(t, addr, post(knownKey, 300), "")
	status, raw := answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusServiceUnavailable, status, raw)
	require.JSONEq(t, `{"error":"inbound_busy"}`, raw)
	// So is a chunked one once what arrived no longer fits.
	chunked := fmt.Sprintf("POST /inbound/sentinel-%s HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked", knownKey)
	c, br = send(t, addr, chunked, fmt.Sprintf("%x\r\n%s\r\n", 300, strings.Repeat("y", 300)))
	status, raw = answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusServiceUnavailable, status, raw)
	require.Equal(t, int64(800), h.budget.inUse(), "a refused body gives back what it took")

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
	require.Len(t, bodies, 2)
	require.Len(t, bodies[1], 1000)
	require.Zero(t, h.budget.inUse())
}

func TestSlowBodiesAreCut(t *testing.T) {
	_, addr := serve(t, &Handler{}, ingress.BodyDeadline(300*time.Millisecond))
	c, br := send(t, addr, post(knownKey, 100), `{"a":`)
	status, raw := answer(t, c, br, 10*time.Second)
	require.Equal(t, http.StatusRequestTimeout, status, raw)
	require.JSONEq(t, `{"error":"body_timeout"}`, raw)
}

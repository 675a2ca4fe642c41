package inbound

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// TestAFullStoreAnswers503StorageFull: events JetStream refused for
// storage answer 503 storage_full with Retry-After (never 500, never 200),
// and so do events that failed while the node reports its store full.
func TestAFullStoreAnswers503StorageFull(t *testing.T) {
	full := sentinel.Errorf(sentinel.CodeStorageFull, "storage is full: test")
	t.Run("refused by JetStream", func(t *testing.T) {
		f, addr := serve(t, New(nil))
		f.err = errors.Join(api.ErrPersist, full)
		c, br := send(t, addr, post(knownKey, 2), "{}")
		status, raw := answer(t, c, br, 5*time.Second)
		require.Equal(t, http.StatusServiceUnavailable, status, raw)
		require.Contains(t, raw, `"error":"storage_full"`)
	})
	t.Run("while the node is full", func(t *testing.T) {
		f, addr := serve(t, New(nil, WithWritable(func() error { return full })))
		f.err = errors.Join(api.ErrPersist, errors.New("publish timed out"))
		c, br := send(t, addr, post(knownKey, 2), "{}")
		status, raw := answer(t, c, br, 5*time.Second)
		require.Equal(t, http.StatusServiceUnavailable, status, raw)
		require.Contains(t, raw, `"error":"storage_full"`)
	})
}

// TestAnUnansweredPublishAnswers503Unavailable: events the bus did not
// take in time (a leader election outlasting the publish's retries) answer
// 503 unavailable with Retry-After, so a sender tries again here or at
// another node; a failure no retry explains stays 500 persist_failed.
func TestAnUnansweredPublishAnswers503Unavailable(t *testing.T) {
	f, addr := serve(t, New(nil))
	f.err = errors.Join(api.ErrPersist, sentinel.Wrap(sentinel.CodeUnavailable, errors.New("nats: timeout"), "the bus did not answer in time"))
	c, br := send(t, addr, post(knownKey, 2), "{}")
	status, raw := answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusServiceUnavailable, status, raw)
	require.Contains(t, raw, `"error":"unavailable"`)

	f.err = errors.Join(api.ErrPersist, errors.New("the stream refused the message"))
	c, br = send(t, addr, post(knownKey, 2), "{}")
	status, raw = answer(t, c, br, 5*time.Second)
	require.Equal(t, http.StatusInternalServerError, status, raw)
	require.Contains(t, raw, `"error":"persist_failed"`)
}

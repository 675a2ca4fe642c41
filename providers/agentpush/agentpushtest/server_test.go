package agentpushtest_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

// call sends one API request with key and decodes the JSON answer.
func call(t *testing.T, s *agentpushtest.Server, key, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := map[string]any{}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func seqs(out map[string]any) []float64 {
	var s []float64
	items, _ := out["items"].([]any)
	for _, it := range items {
		s = append(s, it.(map[string]any)["seq"].(float64))
	}
	return s
}

func TestAtLeastOnceQueue(t *testing.T) {
	s := agentpushtest.Start(t, agentpushtest.Config{})
	k := s.Key()
	status, out := call(t, s, k, http.MethodPost, "/subscriptions", map[string]any{"subject": "x:y", "source": "x", "consumer_ref": "c", "types": nil})
	require.Equal(t, http.StatusCreated, status)
	id := out["subscription"].(map[string]any)["id"].(string)
	for _, eid := range []string{"e1", "e2", "e3"} {
		s.Enqueue(id, sentinel.NewEvent(eid, "s", "x.a.b", "x:y", []string{"x:y"}, time.Unix(0, 0), "", false, nil))
	}
	events := "/subscriptions/" + id + "/events"

	_, out = call(t, s, k, http.MethodGet, events+"?after=0&limit=2", nil)
	require.Equal(t, []float64{1, 2}, seqs(out))
	_, out = call(t, s, k, http.MethodGet, events+"?after=0", nil)
	require.Equal(t, []float64{1, 2, 3}, seqs(out), "no ack: served again")

	status, _ = call(t, s, k, http.MethodPost, "/subscriptions/"+id+"/ack", map[string]any{"upToSeq": 2})
	require.Equal(t, http.StatusOK, status)
	_, out = call(t, s, k, http.MethodGet, events+"?after=0", nil)
	require.Equal(t, []float64{3}, seqs(out), "acked rows are never re-served")
	require.Equal(t, []int64{3}, s.Pending(id))
	require.Equal(t, int64(2), s.Acked(id))

	status, _ = call(t, s, k, http.MethodPost, "/subscriptions/"+id+"/ack", map[string]any{"upToSeq": 0})
	require.Equal(t, http.StatusBadRequest, status)
	status, _ = call(t, s, k, http.MethodGet, events+"?limit=1001", nil)
	require.Equal(t, http.StatusBadRequest, status)
}

func TestAuthFaultsAndLifecycle(t *testing.T) {
	s := agentpushtest.Start(t, agentpushtest.Config{APIKey: "k1"})
	status, _ := call(t, s, "wrong", http.MethodGet, "/subscriptions/sub_1", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	s.FailAuth(http.StatusForbidden)
	status, _ = call(t, s, "k1", http.MethodGet, "/subscriptions/sub_1", nil)
	require.Equal(t, http.StatusForbidden, status)
	s.FailAuth(0)
	s.FailNext(http.StatusServiceUnavailable, 1)
	status, _ = call(t, s, "k1", http.MethodGet, "/subscriptions/sub_1", nil)
	require.Equal(t, http.StatusServiceUnavailable, status)
	status, _ = call(t, s, "k1", http.MethodGet, "/subscriptions/sub_1", nil)
	require.Equal(t, http.StatusNotFound, status)

	status, _ = call(t, s, "k1", http.MethodPost, "/subscriptions", map[string]any{"subject": "x:y", "source": "x", "consumer_ref": "c", "mode": "push"})
	require.Equal(t, http.StatusBadRequest, status, "push needs a callback")
	status, out := call(t, s, "k1", http.MethodPost, "/subscriptions", map[string]any{"subject": "x:y", "source": "x", "consumer_ref": "c",
		"mode": "push", "callback_url": "https://a.example/inbound/sentinel-k", "callback_secret": "sec"})
	require.Equal(t, http.StatusCreated, status)
	require.NotContains(t, out["subscription"], "callback_secret")

	status, _ = call(t, s, "k1", http.MethodPatch, "/subscriptions/sub_1", map[string]any{"callback_url": "https://b.example/x"})
	require.Equal(t, http.StatusOK, status)
	sub, ok := s.Subscription("sub_1")
	require.True(t, ok)
	require.Equal(t, "https://b.example/x", sub.CallbackURL)
	require.Equal(t, "sec", sub.CallbackSecret)

	status, _ = call(t, s, "k1", http.MethodDelete, "/subscriptions/sub_1", nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _ = call(t, s, "k1", http.MethodDelete, "/subscriptions/sub_1", nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Len(t, s.RequestsTo(http.MethodDelete, "/subscriptions/sub_1"), 2)
	require.Len(t, s.Requests(), 9)
}

func TestSignV2(t *testing.T) {
	// HMAC-SHA256("secret", "1700000000.{}"), computed independently.
	got := agentpushtest.SignV2("secret", time.Unix(1700000000, 0), []byte("{}"))
	require.Equal(t, "v2="+hmacHex("secret", "1700000000.{}"), got)
	h := agentpushtest.SignedHeader("secret", time.Unix(1700000000, 0), []byte("{}"))
	require.Equal(t, "1700000000", h.Get("X-Agentpush-Timestamp"))
	require.Equal(t, got, h.Get("X-Agentpush-Signature"))
}

func hmacHex(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

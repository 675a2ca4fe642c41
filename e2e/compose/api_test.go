package compose

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeSecret signs the fake provider's push deliveries (its default).
const fakeSecret = "fake-secret"

// client talks to the nodes through their 127.0.0.1 ports.
var client = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{Proxy: nil}}

// call sends a JSON request with the token and decodes the answer into
// out (when non-nil); it returns the status, or 0 when no answer came.
func call(t *testing.T, method, url, token string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		require.NoError(t, json.Unmarshal(raw, out), "%s %s: %s", method, url, raw)
	}
	return resp.StatusCode
}

// createFakeSentinel creates a sentinel of the fake provider for session
// on the node at base and returns its id.
func createFakeSentinel(t *testing.T, base, token, subject, session string) string {
	t.Helper()
	var out struct {
		Sentinel struct {
			ID string `json:"id"`
		} `json:"sentinel"`
	}
	status := call(t, http.MethodPost, base+"/sentinels", token,
		map[string]any{"subject": subject, "sessionId": session, "provider": "fake", "until": "never"}, &out)
	require.Equal(t, http.StatusCreated, status)
	require.NotEmpty(t, out.Sentinel.ID)
	return out.Sentinel.ID
}

// envelope is a CloudEvent for the fake provider's push ingress.
func envelope(t *testing.T, id, subject string) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"specversion": "1.0", "id": id, "source": "//agentproto.local/sentinel/fake", "type": "fake.ping",
		"subject": subject, "subjects": []string{subject}, "time": "2026-11-01T10:00:00Z",
		"summary": "ping " + id, "terminal": false, "data": map[string]any{"n": id},
	})
	require.NoError(t, err)
	return raw
}

// push posts a signed event to the sentinel's ingress route on base and
// returns the status (0: no answer).
func push(base, sentinelID string, body []byte) int {
	m := hmac.New(sha256.New, []byte(fakeSecret))
	m.Write(body)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/inbound/sentinel-fk-"+strings.ToLower(sentinelID), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fake-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// pushUntilStored sends body to the first node of bases that stores it
// (2xx), retrying the same body (the same event id) across them until
// deadline: an answer lost to a dying node is repeated, never dropped.
func pushUntilStored(t *testing.T, bases []string, sentinelID string, body []byte, within time.Duration) {
	t.Helper()
	require.NoError(t, tryPush(bases, sentinelID, body, within))
}

// tryPush is pushUntilStored returning the failure (for goroutines).
func tryPush(bases []string, sentinelID string, body []byte, within time.Duration) error {
	deadline := time.Now().Add(within)
	for i := 0; ; i++ {
		base := bases[i%len(bases)]
		if s := push(base, sentinelID, body); s >= 200 && s < 300 {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no node stored the event within %s (last: %s answered %d)", within, base, s)
		}
		time.Sleep(200 * time.Millisecond) // back off between attempts
	}
}

// inboxIDs reads every message of session's inbox on base and returns how
// many times each event id (the CloudEvent in data) appears.
func inboxIDs(t *testing.T, base, token, session string) map[string]int {
	t.Helper()
	counts, status := readInbox(t, base, token, session)
	require.Equal(t, http.StatusOK, status)
	return counts
}

// readInbox is inboxIDs returning the status of a failed read instead
// (a read during a stream leader election may fail: waitInbox retries).
func readInbox(t *testing.T, base, token, session string) (map[string]int, int) {
	t.Helper()
	counts := map[string]int{}
	after := 0
	for {
		var out struct {
			Messages []struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			} `json:"messages"`
			Next int `json:"next"`
		}
		status := call(t, http.MethodGet, fmt.Sprintf("%s/sessions/%s/inbox?after=%d&limit=200", base, session, after), token, nil, &out)
		if status != http.StatusOK {
			return nil, status
		}
		for _, m := range out.Messages {
			counts[m.Data.ID]++
		}
		if len(out.Messages) == 0 || out.Next <= after {
			return counts, status
		}
		after = out.Next
	}
}

// waitInbox waits until session's inbox on base holds every id of want,
// and returns the counts.
func waitInbox(t *testing.T, base, token, session string, want []string, within time.Duration) map[string]int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		counts, status := readInbox(t, base, token, session)
		if status != http.StatusOK {
			t.Logf("inbox read on %s answered %d; retrying", base, status)
		}
		missing := len(want)
		if status == http.StatusOK {
			missing = 0
		}
		for _, id := range want {
			if status == http.StatusOK && counts[id] == 0 {
				missing++
			}
		}
		if missing == 0 {
			return counts
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events missing from %s's inbox on %s after %s", missing, len(want), session, base, within)
		}
		time.Sleep(500 * time.Millisecond) // poll the inbox
	}
}

// exactlyOnce fails unless every id of want appears once and nothing else
// appears.
func exactlyOnce(t *testing.T, counts map[string]int, want []string) {
	t.Helper()
	wanted := map[string]bool{}
	for _, id := range want {
		wanted[id] = true
		require.Equal(t, 1, counts[id], "event %s delivered %d times", id, counts[id])
	}
	for id, n := range counts {
		require.True(t, wanted[id], "unexpected inbox message for event %q (%d times)", id, n)
	}
}

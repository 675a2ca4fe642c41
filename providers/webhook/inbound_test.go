package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "payloads", name+".json"))
	require.NoError(t, err)
	return b
}

func TestParseInbound(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	h.gh.AddRepo("acme/gadgets")
	p := h.provider("node-a")
	hd := h.create(p, "github:acme/widgets#2")
	other := h.create(p, "github:acme/gadgets")
	secret := h.liveHook(testRepo).Secret
	otherSecret := h.liveHook("acme/gadgets").Secret
	require.NotEqual(t, secret, otherSecret)
	key := hd.StateString("hookKey")
	pr := payload(t, "pull_request")
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

	hdr := func(event, delivery, sig string) http.Header {
		out := http.Header{}
		if event != "" {
			out.Set("X-GitHub-Event", event)
		}
		if delivery != "" {
			out.Set("X-GitHub-Delivery", delivery)
		}
		if sig != "" {
			out.Set("X-Hub-Signature-256", sig)
		}
		return out
	}
	sign := func(b []byte) string { return github.SignWebhook(secret, b) }
	lower := http.Header{
		"x-github-event":      {"pull_request"},
		"x-github-delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"},
		"x-hub-signature-256": {sign(pr)},
	}
	notJSON := []byte(`{"action":`)
	unsupported := payload(t, "push")
	ping := payload(t, "ping")

	tests := []struct {
		name   string
		key    string
		body   []byte
		header http.Header
		events int
		status int    // 0: success
		code   string // InboundError code
		reason string
		err    error
	}{
		{name: "valid", body: pr, header: hdr("pull_request", "72d3162e-cc78-11e3-81ab-4c9367dc0958", sign(pr)), events: 1},
		{name: "lower-case header names", body: pr, header: lower, events: 1},
		{name: "unknown key", key: "ffffffffffffffffffffffffffffffff", body: pr, header: hdr("pull_request", "d1", sign(pr)), err: providers.ErrUnknownHook},
		{name: "malformed key", key: "../../etc", body: pr, header: hdr("pull_request", "d1", sign(pr)), err: providers.ErrUnknownHook},
		{name: "another repo's key", key: other.StateString("hookKey"), body: pr, header: hdr("pull_request", "d1", sign(pr)), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "another repo's secret", body: pr, header: hdr("pull_request", "d1", github.SignWebhook(otherSecret, pr)), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "tampered body", body: append([]byte(" "), pr...), header: hdr("pull_request", "d1", sign(pr)), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "missing signature", body: pr, header: hdr("pull_request", "d1", ""), status: 401, code: "bad_signature", reason: "missing_signature"},
		{name: "sig deadbeef", body: pr, header: hdr("pull_request", "d1", "deadbeef"), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "sig empty digest", body: pr, header: hdr("pull_request", "d1", "sha256="), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "sig not hex", body: pr, header: hdr("pull_request", "d1", "sha256=zz"), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "sig sha1", body: pr, header: hdr("pull_request", "d1", "sha1=0123456789abcdef0123456789abcdef01234567"), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "sig short hex", body: pr, header: hdr("pull_request", "d1", sign(pr)[:40]), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "bad signature beats missing event", body: pr, header: hdr("", "", "sha256=zz"), status: 401, code: "bad_signature", reason: "bad_signature"},
		{name: "missing event header", body: pr, header: hdr("", "d1", sign(pr)), status: 400, code: "missing_event_header"},
		{name: "ping", body: ping, header: hdr("ping", "", sign(ping)), events: 0},
		{name: "ping needs no delivery id", body: []byte(`not json`), header: hdr("ping", "", sign([]byte(`not json`))), events: 0},
		{name: "missing delivery header", body: pr, header: hdr("pull_request", "", sign(pr)), status: 400, code: "missing_delivery_header"},
		{name: "bad delivery header", body: pr, header: hdr("pull_request", "a b", sign(pr)), status: 400, code: "invalid_delivery_header"},
		{name: "invalid json", body: notJSON, header: hdr("pull_request", "d1", sign(notJSON)), status: 400, code: "invalid_json"},
		{name: "empty body", body: []byte{}, header: hdr("pull_request", "d1", sign([]byte{})), status: 400, code: "invalid_json"},
		{name: "unsupported event", body: unsupported, header: hdr("push", "d1", sign(unsupported)), events: 0},
		{name: "malformed payload", body: []byte(`{"action":"opened"}`), header: hdr("pull_request", "d1", sign([]byte(`{"action":"opened"}`))), status: 400, code: "missing_repository"},
		{name: "a pull_request body under another event", body: pr, header: hdr("pull_request_review", "d1", sign(pr)), status: 400, code: "event_payload_mismatch"},
		{name: "a pull_request body as a comment", body: pr, header: hdr("issue_comment", "d1", sign(pr)), status: 400, code: "event_payload_mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := key
			if tt.key != "" {
				k = tt.key
			}
			evs, err := p.ParseInbound(context.Background(), providers.Inbound{HookKey: k, Body: tt.body, Header: tt.header, Now: now}, hd)
			h.seen(err)
			switch {
			case tt.err != nil:
				require.ErrorIs(t, err, tt.err)
				require.NotContains(t, err.Error(), k, "an unknown key is not echoed")
			case tt.status != 0:
				var ie *providers.InboundError
				require.True(t, errors.As(err, &ie), "%v", err)
				require.Equal(t, tt.status, ie.Status)
				require.Equal(t, tt.code, ie.Code)
				if tt.reason != "" {
					require.Equal(t, tt.reason, ie.Reason)
				}
				require.Empty(t, evs)
			default:
				require.NoError(t, err)
				require.Len(t, evs, tt.events)
				require.NotNil(t, evs)
			}
		})
	}

	// The accepted delivery is the normalized event.
	evs, err := p.ParseInbound(context.Background(), providers.Inbound{HookKey: key, Body: pr, Header: lower, Now: now}, hd)
	require.NoError(t, err)
	ev := evs[0]
	require.Equal(t, github.WebhookEventID("72d3162e-cc78-11e3-81ab-4c9367dc0958"), ev.ID)
	require.Equal(t, github.WebhookBodyKey(pr), ev.DedupKey)

	// A replay of the signed body under a fresh delivery id has that id,
	// and the same second dedup key (the delivery header is not signed).
	replay := lower.Clone()
	replay["x-github-delivery"] = []string{"0b4cbd5a-1c7a-4bd3-9e5c-6a0e5ec0a001"}
	again, err := p.ParseInbound(context.Background(), providers.Inbound{HookKey: key, Body: pr, Header: replay, Now: now}, hd)
	require.NoError(t, err)
	require.Equal(t, "evt_0b4cbd5a-1c7a-4bd3-9e5c-6a0e5ec0a001", again[0].ID)
	require.Equal(t, ev.DedupKey, again[0].DedupKey)
	require.Equal(t, Source, ev.Source)
	require.Equal(t, "github.pull_request.closed", ev.Type)
	require.Equal(t, "github:Codertocat/Hello-World#2", ev.Subject)
	require.Equal(t, sentinel.FormatTime(now), ev.Time)
	require.True(t, ev.Terminal)
	require.Equal(t, "PR Codertocat/Hello-World#2 merged by octo-maintainer", ev.Summary)
	var data map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &data))
	require.Equal(t, "octo-maintainer", data["actor"])
	require.Equal(t, "OWNER", data["authorAssociation"])
	require.Equal(t, false, data["actorIsBot"])

	// The key from the handle serves when the inbound carries none.
	evs, err = p.ParseInbound(context.Background(), providers.Inbound{Body: pr, Header: lower}, hd)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.False(t, strings.Contains(string(evs[0].Data), secret))
}

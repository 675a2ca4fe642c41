package agentpush

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

const testSecret = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7"

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func pushHandle(signature string) sentinel.Handle {
	st := map[string]any{"mode": "push", "consumerRef": "agentproto:sentinel:sen_1", "hookKey": "00112233445566778899aabbccddeeff", "callbackSecret": testSecret}
	if signature != "" {
		st["signature"] = signature
	}
	return sentinel.Handle{Provider: Slug, RemoteID: "sub_1", Cursor: "0", State: st}
}

func validBody(t *testing.T) []byte {
	t.Helper()
	ref := sentinel.GitHubRef{Owner: "acme", Repo: "api", Number: 7}
	ev := sentinel.NewEvent("ev-1", "agentpush://github", "github.pull_request.closed", ref.Subject(), ref.Subjects(), testNow, "closed", true, map[string]any{"merged": true})
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	return raw
}

func TestParseInbound(t *testing.T) {
	body := validBody(t)
	signed := func(ts time.Time) http.Header { return agentpushtest.SignedHeader(testSecret, ts, body) }
	cases := []struct {
		name   string
		handle sentinel.Handle
		header http.Header
		body   []byte
		status int    // 0 = success
		reason string // InboundError.Reason
	}{
		{name: "valid", header: signed(testNow)},
		{name: "299 s in the past", header: signed(testNow.Add(-299 * time.Second))},
		{name: "299 s in the future", header: signed(testNow.Add(299 * time.Second))},
		{name: "exactly 300 s", header: signed(testNow.Add(-300 * time.Second))},
		{name: "301 s in the past", header: signed(testNow.Add(-301 * time.Second)), status: 401, reason: "stale_timestamp"},
		{name: "301 s in the future", header: signed(testNow.Add(301 * time.Second)), status: 401, reason: "stale_timestamp"},
		{name: "tampered body", header: signed(testNow), body: []byte(strings.Replace(string(body), "closed", "opened", 1)), status: 401, reason: "bad_signature"},
		{name: "wrong secret", header: agentpushtest.SignedHeader("another-secret", testNow, body), status: 401, reason: "bad_signature"},
		{name: "garbled signature", header: withHeader(signed(testNow), HeaderSignature, "v2=not-hex"), status: 401, reason: "bad_signature"},
		{name: "short signature", header: withHeader(signed(testNow), HeaderSignature, "v2=abcd"), status: 401, reason: "bad_signature"},
		{name: "unknown scheme", header: withHeader(signed(testNow), HeaderSignature, "v3=abcd"), status: 401, reason: "bad_signature"},
		{name: "several tokens, uppercase hex", header: withHeader(signed(testNow), HeaderSignature,
			"v1=deadbeef, "+strings.ToUpper(agentpushtest.SignV2(testSecret, testNow, body)[3:])+"x, v2="+strings.ToUpper(agentpushtest.SignV2(testSecret, testNow, body)[3:]))},
		{name: "signature of another timestamp", header: withHeader(signed(testNow), HeaderTimestamp, strconv.FormatInt(testNow.Unix()+1, 10)), status: 401, reason: "bad_signature"},
		{name: "non-decimal timestamp", header: withHeader(signed(testNow), HeaderTimestamp, "1e9"), status: 401, reason: "bad_signature"},
		{name: "16-digit timestamp", header: withHeader(signed(testNow), HeaderTimestamp, "1234567890123456"), status: 401, reason: "bad_signature"},
		{name: "padded timestamp", header: withHeader(signed(testNow), HeaderTimestamp, " "+strconv.FormatInt(testNow.Unix(), 10)+" ")},
		{name: "missing timestamp", header: withHeader(signed(testNow), HeaderTimestamp, ""), status: 401, reason: "missing_signature"},
		{name: "missing signature", header: withHeader(signed(testNow), HeaderSignature, ""), status: 401, reason: "missing_signature"},
		{name: "no headers", header: http.Header{}, status: 401, reason: "missing_signature"},
		{name: "lower-case header names", header: http.Header{
			"x-agentpush-timestamp": {strconv.FormatInt(testNow.Unix(), 10)},
			"x-agentpush-signature": {agentpushtest.SignV2(testSecret, testNow, body)},
		}},
		{name: "legacy on a v2 handle", header: http.Header{"X-Agentpush-Signature": {agentpushtest.SignLegacy(testSecret, body)}}, status: 401, reason: "legacy_signature_rejected"},
		{name: "legacy hub header on a v2 handle", header: http.Header{"X-Hub-Signature-256": {agentpushtest.SignLegacy(testSecret, body)}}, status: 401, reason: "legacy_signature_rejected"},
		{name: "legacy on an old handle", handle: pushHandle(""), header: http.Header{"X-Agentpush-Signature": {agentpushtest.SignLegacy(testSecret, body)}}},
		{name: "bad legacy on an old handle", handle: pushHandle(""), header: http.Header{"X-Agentpush-Signature": {agentpushtest.SignLegacy("nope", body)}}, status: 401, reason: "bad_signature"},
		{name: "invalid json", body: []byte(`{"specversion":`), status: 400, reason: "invalid_json"},
		{name: "invalid envelope", body: []byte(`{"specversion":"1.0","id":"x"}`), status: 400, reason: "invalid_envelope"},
		{name: "array body", body: []byte(`[` + string(body) + `]`), status: 400, reason: "invalid_envelope"},
	}
	p := New(Config{Now: func() time.Time { return testNow }})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, hdr := tc.body, tc.header
			if b == nil {
				b = body
			}
			if hdr == nil {
				hdr = agentpushtest.SignedHeader(testSecret, testNow, b)
			}
			h := tc.handle
			if h.State == nil {
				h = pushHandle("v2")
			}
			evs, err := p.ParseInbound(context.Background(), providers.Inbound{HookKey: h.StateString("hookKey"), Body: b, Header: hdr}, h)
			if tc.status == 0 {
				require.NoError(t, err)
				require.Len(t, evs, 1)
				require.Equal(t, "ev-1", evs[0].ID)
				return
			}
			var ie *providers.InboundError
			require.True(t, errors.As(err, &ie), "got %v", err)
			require.Equal(t, tc.status, ie.Status)
			require.Equal(t, tc.reason, ie.Reason)
			require.Empty(t, evs)
		})
	}
}

func TestParseInboundUsesInboundClock(t *testing.T) {
	body := validBody(t)
	p := New(Config{Now: func() time.Time { return testNow.Add(time.Hour) }})
	hdr := agentpushtest.SignedHeader(testSecret, testNow, body)
	_, err := p.ParseInbound(context.Background(), providers.Inbound{Body: body, Header: hdr, Now: testNow}, pushHandle("v2"))
	require.NoError(t, err)
	_, err = p.ParseInbound(context.Background(), providers.Inbound{Body: body, Header: hdr}, pushHandle("v2"))
	require.ErrorContains(t, err, "stale_timestamp")
}

func TestParseInboundUnknownHook(t *testing.T) {
	body := validBody(t)
	hdr := agentpushtest.SignedHeader(testSecret, testNow, body)
	p := New(Config{Now: func() time.Time { return testNow }})
	cases := []struct {
		name  string
		state map[string]any
	}{
		{name: "poll handle", state: map[string]any{"mode": "poll", "callbackSecret": testSecret}},
		{name: "push handle without secret", state: map[string]any{"mode": "push", "hookKey": "k"}},
		{name: "no state"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.ParseInbound(context.Background(), providers.Inbound{Body: body, Header: hdr}, sentinel.Handle{Provider: Slug, State: tc.state})
			require.ErrorIs(t, err, providers.ErrUnknownHook)
		})
	}
}

func TestVerifySignatureV2Reasons(t *testing.T) {
	body := []byte(`{"a":1}`)
	ts := strconv.FormatInt(testNow.Unix(), 10)
	good := agentpushtest.SignV2(testSecret, testNow, body)
	cases := []struct {
		name string
		ts   string
		sig  string
		want string
	}{
		{name: "valid", ts: ts, sig: good, want: ""},
		{name: "missing timestamp", sig: good, want: reasonMissingTimestamp},
		{name: "invalid timestamp", ts: "-5", sig: good, want: reasonInvalidTimestamp},
		{name: "skew", ts: "1", sig: good, want: reasonTimestampSkew},
		{name: "missing signature", ts: ts, want: reasonMissingSignature},
		{name: "invalid signature", ts: ts, sig: "sha1=abc", want: reasonInvalidSignature},
		{name: "mismatch", ts: ts, sig: "v2=" + strings.Repeat("0", 64), want: reasonSignatureMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.ts != "" {
				h.Set(HeaderTimestamp, tc.ts)
			}
			if tc.sig != "" {
				h.Set(HeaderSignature, tc.sig)
			}
			require.Equal(t, tc.want, verifySignatureV2(h, body, testSecret, testNow))
		})
	}
}

func withHeader(h http.Header, name, value string) http.Header {
	h = h.Clone()
	if value == "" {
		h.Del(name)
	} else {
		h.Set(name, value)
	}
	return h
}

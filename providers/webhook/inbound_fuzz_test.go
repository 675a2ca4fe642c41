package webhook

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// FuzzParseInbound drives the inbound parser with arbitrary headers and
// bodies, signed with the hook's secret (signed true) or carrying the
// fuzzed signature header. It must never panic; every outcome is events, no
// events, ErrUnknownHook or an *InboundError with a 400 or 401 status (503
// when a fork PR's lookup got no answer); an
// unsigned body is never accepted; no error carries the secret.
func FuzzParseInbound(f *testing.F) {
	f.Add("pull_request", "72d3162e-cc78-11e3-81ab-4c9367dc0958", true, "", []byte(`{"action":"closed","number":3,"repository":{"full_name":"o/r"},"sender":{"login":"u"},"pull_request":{"merged":true}}`))
	f.Add("issue_comment", "d-1", true, "", []byte(`{"action":"created","issue":{"number":3,"pull_request":{}},"repository":{"name":"r","owner":{"login":"o"}},"comment":{"user":{"login":"x[bot]","type":"Bot"},"author_association":"NONE"}}`))
	f.Add("check_suite", "d-2", true, "", []byte(`{"action":"completed","repository":{"full_name":"o/r"},"check_suite":{"conclusion":"failure","pull_requests":[{"number":1}]}}`))
	f.Add("ping", "", true, "", []byte(`{"zen":"x"}`))
	f.Add("push", "d-3", true, "", []byte(`{}`))
	f.Add("pull_request", "d-4", false, "sha256=zz", []byte(`{}`))
	f.Add("pull_request", "d-5", false, "", []byte(`{"action":`))
	f.Add("", "", true, "", []byte(nil))

	p, key, secret := fuzzProvider(f)
	f.Fuzz(func(t *testing.T, event, delivery string, signed bool, sig string, body []byte) {
		hdr := http.Header{}
		if signed {
			sig = github.SignWebhook(secret, body)
		}
		hdr.Set("X-Hub-Signature-256", sig)
		hdr.Set("X-GitHub-Event", event)
		hdr.Set("X-GitHub-Delivery", delivery)
		evs, err := p.ParseInbound(context.Background(), providers.Inbound{HookKey: key, Body: body, Header: hdr, Now: time.Unix(0, 0)}, handleFor(&hookRecord{Key: key, Repo: "o/r", HookID: 1}, "wh_1"))
		if err == nil {
			require.NotNil(t, evs)
			require.True(t, signed || github.VerifyWebhookSignature(secret, body, sig) == "", "an unsigned delivery was accepted")
			for _, ev := range evs {
				require.NoError(t, ev.Validate())
				require.Equal(t, "evt_"+delivery, ev.ID, "the id is evt_<X-GitHub-Delivery>")
				require.Equal(t, github.WebhookBodyKey(body), ev.DedupKey, "the second dedup key is the signed body's digest")
			}
			return
		}
		require.NotContains(t, err.Error(), secret)
		var ie *providers.InboundError
		require.True(t, errors.As(err, &ie), "%v", err)
		require.Contains(t, []int{400, 401, 503}, ie.Status)
		if !signed {
			return
		}
		require.Contains(t, []int{400, 503}, ie.Status, "a signed delivery fails only on its content, or on a lookup GitHub did not answer")
	})
}

func fuzzProvider(f *testing.F) (*Provider, string, string) {
	p, err := New(Config{Runner: &stubRunner{}, Store: newMemKV(), Locker: memLocker{},
		PublicURL: func() providers.PublicURL { return providers.PublicURL{} }})
	require.NoError(f, err)
	rec := &hookRecord{Key: newRouteKey(), Repo: "o/r", HookID: 1, Secret: newSecret(), Holders: []string{"wh_1"}}
	_, err = p.store().save(context.Background(), rec, 0)
	require.NoError(f, err)
	return p, rec.Key, rec.Secret
}

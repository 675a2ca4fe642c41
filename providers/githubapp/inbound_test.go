package githubapp_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/githubapp"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func hdEmpty() sentinel.Handle { return sentinel.Handle{Provider: githubapp.Slug} }

func TestPushThroughTheAppRoute(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)
	hd, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: spec("github:" + fixtureRepo + "#2")})
	require.NoError(t, err)

	evs, err := p.ParseInbound(ctx, delivery(t, "pull_request", "pull_request_closed.json", testSecret), hdEmpty())
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	for _, ev := range evs {
		require.Equal(t, githubapp.Source, ev.Source)
		require.NoError(t, ev.Validate())
	}
	require.True(t, p.Concerns(hd, evs), "the delivery concerns the sentinel on its repository")
	other := sentinel.Handle{Provider: githubapp.Slug, State: map[string]any{"repo": "acme/other"}}
	require.False(t, p.Concerns(other, evs), "a sentinel on another repository is not given the delivery")
}

func TestInboundRefusesABadSignature(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	for _, tc := range []struct {
		name string
		in   providers.Inbound
	}{
		{"wrong secret", delivery(t, "pull_request", "pull_request_closed.json", "not-the-secret")},
		{"no signature", func() providers.Inbound {
			in := delivery(t, "pull_request", "pull_request_closed.json", testSecret)
			in.Header.Del("X-Hub-Signature-256")
			return in
		}()},
		{"body changed", func() providers.Inbound {
			in := delivery(t, "pull_request", "pull_request_closed.json", testSecret)
			in.Body = append(in.Body[:len(in.Body)-1:len(in.Body)-1], ' ', '}')
			return in
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.ParseInbound(ctxT(t), tc.in, hdEmpty())
			var ie *providers.InboundError
			require.True(t, errors.As(err, &ie), err)
			require.Equal(t, 401, ie.Status)
		})
	}
}

func TestInstallationChangesKeepCoverageCurrent(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)
	require.True(t, p.Covers(ctx, spec("github:"+fixtureRepo)), "listed from the fake at first use")

	// installation_repositories added: Codertocat/Space joins installation 957387.
	evs, err := p.ParseInbound(ctx, delivery(t, "installation_repositories", "repositories_added.json", testSecret), hdEmpty())
	require.NoError(t, err)
	require.Empty(t, evs, "an installation change is not a sentinel event")
	hd, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: spec("github:Codertocat/Space#1")})
	require.NoError(t, err, "a repository added to the installation is watched with no listing")
	require.Equal(t, "957387", hd.RemoteID)

	// installation 2 gains octocat/Hello-World, then is deleted.
	_, err = p.ParseInbound(ctx, signed(t, "installation_repositories",
		`{"action":"added","installation":{"id":2},"repositories_added":[{"full_name":"octocat/Hello-World"}],"repositories_removed":[]}`), hdEmpty())
	require.NoError(t, err)
	_, err = p.Create(ctx, providers.CreateRequest{SentinelID: "sen_2", Spec: spec("github:octocat/Hello-World#1")})
	require.NoError(t, err)
	_, err = p.ParseInbound(ctx, delivery(t, "installation", "installation_deleted.json", testSecret), hdEmpty())
	require.NoError(t, err)
	_, err = p.Create(ctx, providers.CreateRequest{SentinelID: "sen_3", Spec: spec("github:octocat/Hello-World#1")})
	require.ErrorIs(t, err, githubapp.ErrNotInstalled, "an uninstalled App covers nothing of that installation")

	// installation_repositories removed: Codertocat/Space leaves 957387.
	_, err = p.ParseInbound(ctx, signed(t, "installation_repositories",
		`{"action":"removed","installation":{"id":957387},"repositories_added":[],"repositories_removed":[{"full_name":"Codertocat/Space"}]}`), hdEmpty())
	require.NoError(t, err)
	st, err := p.Status(ctx, hd)
	require.NoError(t, err)
	require.False(t, st.OK)
	require.Contains(t, st.Detail, "install the App on that repository")

	// The fixture's removal (installation 2, octocat/Hello-World) is
	// accepted although nothing of it is left.
	_, err = p.ParseInbound(ctx, delivery(t, "installation_repositories", "repositories_removed.json", testSecret), hdEmpty())
	require.NoError(t, err)
}

func TestInstallationDeliveryWithoutInstallationIsRefused(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	in := signed(t, "installation", `{"action":"created","repositories":[]}`)
	_, err := p.ParseInbound(ctxT(t), in, hdEmpty())
	var ie *providers.InboundError
	require.True(t, errors.As(err, &ie), err)
	require.Equal(t, 400, ie.Status)
}

// signed is a signed App delivery of body.
func signed(t *testing.T, event, body string) providers.Inbound {
	t.Helper()
	in := delivery(t, event, "installation_created.json", testSecret)
	in.Body = []byte(body)
	in.Header.Set(github.WebhookSignatureHeader, github.SignWebhook(testSecret, in.Body))
	return in
}

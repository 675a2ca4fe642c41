package githubapp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/githubapp"
)

func TestCheckSetup(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	loose := writeKey(t, appKey(t), 0o644)
	notPEM := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello"), 0o600))
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"good", map[string]string{githubapp.FieldAppID: "4242", githubapp.FieldPrivateKeyFile: h.keyFile}, ""},
		{"app id not a number", map[string]string{githubapp.FieldAppID: "my-app"}, "is not an App id"},
		{"key readable by others", map[string]string{githubapp.FieldPrivateKeyFile: loose}, "chmod 600"},
		{"key missing", map[string]string{githubapp.FieldPrivateKeyFile: filepath.Join(t.TempDir(), "none.pem")}, "cannot be read"},
		{"not a PEM", map[string]string{githubapp.FieldPrivateKeyFile: notPEM}, "no PEM block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.CheckSetup(ctxT(t), tc.fields)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
			require.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
}

func TestLooseKeyFileIsNotReady(t *testing.T) {
	h := newHarness(t)
	h.creds.set(githubapp.FieldPrivateKeyFile, writeKey(t, appKey(t), 0o640))
	r := h.provider().Readiness(ctxT(t))
	require.False(t, r.Ready)
	require.Contains(t, r.Reason, "chmod 600")
}

func TestSetupFieldsKeepSecretsSensitive(t *testing.T) {
	h := newHarness(t)
	byName := map[string]providers.SetupField{}
	for _, f := range h.provider().SetupFields() {
		byName[f.Name] = f
	}
	require.True(t, byName[githubapp.FieldWebhookSecret].Sensitive)
	require.True(t, byName[githubapp.FieldPrivateKeyFile].Sensitive)
	require.True(t, byName[githubapp.FieldBaseURL].Endpoint)
	require.True(t, byName[githubapp.FieldAppID].Required)
}

// TestPresetFromTheNodeConfig: with nothing stored, the node's config
// (github.app, from AGENTPROTO_GITHUB_APP_* and the webhook secret's file)
// sets the App up: it is ready, names the source, mints tokens with the
// key and verifies deliveries with the secret. Its key file is held to
// 0600 as a stored one. A setup stored through the API replaces it whole.
func TestPresetFromTheNodeConfig(t *testing.T) {
	h := newHarness(t)
	h.creds = &creds{fields: map[string]string{}}
	h.preset = githubapp.Preset{AppID: "4242", PrivateKeyFile: h.keyFile, WebhookSecret: "preset-secret-0123456789"}
	p := h.provider()
	ctx := ctxT(t)

	r := p.Readiness(ctx)
	require.True(t, r.Ready, r.Reason)
	require.Equal(t, "node config github.app (App id 4242)", r.CredentialSource)
	require.NoError(t, p.Sync(ctx), "the preset's key signs the App's JWT")
	_, err := p.ParseInbound(ctx, delivery(t, "pull_request", "pull_request_closed.json", "preset-secret-0123456789"), hdEmpty())
	require.NoError(t, err, "the preset's secret verifies deliveries")

	loose := h.provider
	h.preset.PrivateKeyFile = writeKey(t, appKey(t), 0o644)
	r = loose().Readiness(ctx)
	require.False(t, r.Ready)
	require.Contains(t, r.Reason, "chmod 600")

	// A stored setup replaces the preset whole: its secret, not the preset's.
	h.creds.set(githubapp.FieldAppID, "4242")
	h.creds.set(githubapp.FieldPrivateKeyFile, h.keyFile)
	h.creds.set(githubapp.FieldWebhookSecret, testSecret)
	p = h.provider()
	require.Equal(t, "github-app setup (App id 4242)", p.Readiness(ctx).CredentialSource)
	_, err = p.ParseInbound(ctx, delivery(t, "pull_request", "pull_request_closed.json", "preset-secret-0123456789"), hdEmpty())
	require.Error(t, err)
	_, err = p.ParseInbound(ctx, delivery(t, "pull_request", "pull_request_closed.json", testSecret), hdEmpty())
	require.NoError(t, err)
}

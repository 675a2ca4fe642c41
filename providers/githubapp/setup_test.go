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

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

// loadServeConfig loads the serve command's config with no flags.
func loadServeConfig(t *testing.T) *cobra.Command {
	t.Helper()
	cmd := newServeCmd(IO{})
	root := &cobra.Command{Use: "sentinel"}
	root.PersistentFlags().String("home", "", "")
	root.AddCommand(cmd)
	require.NoError(t, cmd.ParseFlags(nil))
	return cmd
}

func TestSecretsComeFromFilesNamedByTheEnvironment(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AGENTPROTO_HOME", home)
	// config.yaml names a token the _FILE variables must beat.
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.yaml"), []byte("token: "+strings.Repeat("y", 40)+"\n"), 0o600))
	api := strings.Repeat("a", 40)
	route := strings.Repeat("r", 40)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	t.Setenv("AGENTPROTO_TOKEN_FILE", write("api", api+"\n"))
	t.Setenv("AGENTPROTO_CLUSTER_TOKEN_FILE", write("route", "  "+route+"\r\n"))
	t.Setenv("AGENTPROTO_NATS_PASSWORD_FILE", write("pw", "hunter2-but-longer"))

	cmd := loadServeConfig(t)
	cfg, err := LoadConfig(cmd, nil)
	require.NoError(t, err)
	require.Equal(t, api, cfg.Token, "the file's content, newline trimmed, beats config.yaml")
	require.Equal(t, route, cfg.Cluster.Token)
	require.Equal(t, "hunter2-but-longer", cfg.NATS.Password)

	// A client verb sends the token the file holds.
	tok, err := envToken()
	require.NoError(t, err)
	require.Equal(t, api, tok)
}

func TestSecretFileRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n\n"), 0o600))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("x", maxSecretFile+1)), 0o600))
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("the-secret-value-never-quoted-in-errors"), 0o600))

	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"missing file", map[string]string{"AGENTPROTO_TOKEN_FILE": filepath.Join(dir, "nope")}, "AGENTPROTO_TOKEN_FILE: read secret file"},
		{"empty file", map[string]string{"AGENTPROTO_CLUSTER_TOKEN_FILE": empty}, "is empty"},
		{"a folder", map[string]string{"AGENTPROTO_TOKEN_FILE": dir}, "not a regular file"},
		{"too big", map[string]string{"AGENTPROTO_TOKEN_FILE": big}, "more than 4096"},
		{"both set", map[string]string{"AGENTPROTO_CLUSTER_TOKEN_FILE": secret, "AGENTPROTO_CLUSTER_TOKEN": "x"}, "both AGENTPROTO_CLUSTER_TOKEN and AGENTPROTO_CLUSTER_TOKEN_FILE are set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTPROTO_HOME", t.TempDir())
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cmd := loadServeConfig(t)
			_, err := LoadConfig(cmd, nil)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "the-secret-value", "an error never quotes a secret")
		})
	}
}

// TestGitHubAppSetupFromTheEnvironment: a deployment sets the GitHub App
// up without `sentinel setup`: its id and key path from the environment,
// its webhook secret from the file AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE
// names. That file, as the key, must be readable by its owner only; an
// error names the variable, the path and the chmod, never the secret.
func TestGitHubAppSetupFromTheEnvironment(t *testing.T) {
	const secret = "the-app-webhook-secret-never-quoted"
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "webhook-secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(secret+"\n"), 0o600))
	keyFile := filepath.Join(dir, "app.pem")

	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_GITHUB_APP_APP_ID", "123456")
	t.Setenv("AGENTPROTO_GITHUB_APP_PRIVATE_KEY_FILE", keyFile)
	t.Setenv("AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE", secretFile)
	cfg, err := LoadConfig(loadServeConfig(t), nil)
	require.NoError(t, err)
	require.Equal(t, "123456", cfg.GitHub.App.AppID)
	require.Equal(t, keyFile, cfg.GitHub.App.PrivateKeyFile)
	require.Equal(t, secret, cfg.GitHub.App.WebhookSecret, "the file's content, newline trimmed")
	require.NoError(t, cfg.Validate())

	t.Setenv("AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE", "")
	cfg, err = LoadConfig(loadServeConfig(t), nil)
	require.NoError(t, err)
	require.ErrorContains(t, cfg.Validate(), "app_id, private_key_file and webhook_secret go together")
	t.Setenv("AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE", secretFile)

	for _, mode := range []os.FileMode{0o640, 0o604, 0o644} {
		require.NoError(t, os.Chmod(secretFile, mode))
		_, err = LoadConfig(loadServeConfig(t), nil)
		require.ErrorContains(t, err, "AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE: secret file "+secretFile)
		require.ErrorContains(t, err, "chmod 600 "+secretFile)
		require.NotContains(t, err.Error(), secret)
	}
}

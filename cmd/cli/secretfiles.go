package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/viper"
)

// secretKeys are the config keys that hold a secret. Each may instead be
// given as a file named by AGENTPROTO_<KEY>_FILE (Docker and Kubernetes
// secrets): AGENTPROTO_TOKEN_FILE, AGENTPROTO_CLUSTER_TOKEN_FILE, ...
var secretKeys = []string{"token", "cluster.token", "nats.password", "nats.client_token", "nats.listen_token", "github.app.webhook_secret"}

// ownerOnlyKeys are the secret keys whose file must be readable by its
// owner only (mode 0600 or stricter), as the GitHub App's private key
// file: AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE. (The older keys' files
// are not checked, so existing deployments keep starting.)
var ownerOnlyKeys = map[string]bool{"github.app.webhook_secret": true}

// maxSecretFile caps a secret file: a token is a line, not a document.
const maxSecretFile = 4096

// envName is the AGENTPROTO_* variable of a config key.
func envName(key string) string {
	return "AGENTPROTO_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// applySecretFiles reads every AGENTPROTO_<KEY>_FILE that is set into its
// key, at the environment's precedence (over config.yaml). The file's
// content is the secret, surrounding white space (the trailing newline of
// `echo > file`) trimmed. Setting both AGENTPROTO_<KEY> and its _FILE is
// refused, as is a file that is missing, empty, a folder or over 4 KiB.
// Errors name the variable and the path, never the content.
func applySecretFiles(v *viper.Viper) error {
	for _, key := range secretKeys {
		fileVar := envName(key) + "_FILE"
		path, ok := os.LookupEnv(fileVar)
		if !ok || strings.TrimSpace(path) == "" {
			continue
		}
		if _, both := os.LookupEnv(envName(key)); both {
			return fmt.Errorf("both %s and %s are set: keep one", envName(key), fileVar)
		}
		if ownerOnlyKeys[key] {
			if err := ownerOnly(path); err != nil {
				return fmt.Errorf("%s: %w", fileVar, err)
			}
		}
		secret, err := readSecretFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", fileVar, err)
		}
		v.Set(key, secret)
	}
	return nil
}

// ownerOnly refuses a file group or others may read (or write), naming
// the chmod to run.
func ownerOnly(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("read secret file %s: %w", path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("secret file %s has mode %04o: run `chmod 600 %s` (it must be readable by its owner only)", path, perm, path)
	}
	return nil
}

// readSecretFile returns the trimmed content of a secret file.
func readSecretFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("read secret file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("secret file %s is not a regular file", path)
	}
	if fi.Size() > maxSecretFile {
		return "", fmt.Errorf("secret file %s has %d bytes, more than %d: it must hold the secret alone", path, fi.Size(), maxSecretFile)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read secret file %s: %w", path, err)
	}
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	return s, nil
}

// envToken returns the API token a client sends: AGENTPROTO_TOKEN, else
// the content of AGENTPROTO_TOKEN_FILE ("" when neither is set).
func envToken() (string, error) {
	if tok := os.Getenv("AGENTPROTO_TOKEN"); tok != "" {
		return tok, nil
	}
	if path := os.Getenv("AGENTPROTO_TOKEN_FILE"); strings.TrimSpace(path) != "" {
		tok, err := readSecretFile(path)
		if err != nil {
			return "", fmt.Errorf("AGENTPROTO_TOKEN_FILE: %w", err)
		}
		return tok, nil
	}
	return "", nil
}

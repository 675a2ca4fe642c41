package githubapp

import (
	"context"
	"strconv"
	"strings"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// CheckSetup implements providers.SetupChecker: before the node stores a
// setup, the App id must be a number and the private key file a 0600 PEM
// of an RSA key (fields are the given ones laid over the stored ones).
// Errors name the fix and never quote the key.
func (p *Provider) CheckSetup(_ context.Context, fields map[string]string) error {
	if id := strings.TrimSpace(fields[FieldAppID]); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
			return providers.SetupError("github-app appId %q is not an App id: give the number on the App's settings page (\"App ID\")", id)
		}
	}
	if path := strings.TrimSpace(fields[FieldPrivateKeyFile]); path != "" {
		raw, err := readKey(path)
		if err != nil {
			return err
		}
		if _, err := github.ParseAppKey(raw); err != nil {
			return providers.SetupError("github-app private key file %s: %v: give the PEM GitHub generated for the App", path, err)
		}
	}
	return nil
}

// Interface guard.
var _ providers.SetupChecker = (*Provider)(nil)

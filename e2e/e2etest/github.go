package e2etest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// GHNodeEnv is the environment that points a node's gh and GitHub client
// at the fake GitHub: the fake's isolated environment, with every
// inherited variable the fake dropped (GH_*, GITHUB_*, proxies, XDG_*...)
// blanked, since Launch starts from the test's environment (CleanEnv has
// already dropped AGENTPROTO_*); extra comes last.
func GHNodeEnv(gh *githubtest.Server, extra ...string) []string {
	env := gh.Env(gh.Token())
	keep := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep[k] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !keep[k] && !strings.HasPrefix(k, "AGENTPROTO_") {
			out = append(out, k+"=")
		}
	}
	out = append(out, env...)
	return append(out, extra...)
}

// WebhookFixture reads a real GitHub payload from the GitHub providers'
// testdata (rel below providers/github/testdata/webhooks).
func WebhookFixture(t testing.TB, rel string) []byte {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "providers", "github", "testdata", "webhooks", rel))
	if err != nil {
		t.Fatalf("webhook fixture %s: %v", rel, err)
	}
	return raw
}

// NewGUID returns a random delivery id shaped like GitHub's
// X-GitHub-Delivery (a UUID).
func NewGUID(t testing.TB) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("guid: %v", err)
	}
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

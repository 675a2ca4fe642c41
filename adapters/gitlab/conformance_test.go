package gitlab_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/adapters/gitlab/gitlabtest"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/providertest"
)

// memCreds is the node's credential store for one adapter.
type memCreds map[string]string

func (c memCreds) Credentials(context.Context, string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range c {
		out[k] = v
	}
	return out, nil
}

// buildAdapter compiles sentinel-adapter-gitlab into a fresh directory.
func buildAdapter(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "sentinel-adapter-gitlab")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/sentinel-adapter-gitlab")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// TestConformance runs the provider conformance suite (the one the
// built-ins pass) against the built executable, through the node's own
// adapter provider, over the protocol only, against the fake GitLab on
// loopback (its certificate trusted through SSL_CERT_FILE).
func TestConformance(t *testing.T) {
	gl := gitlabtest.New(t, token)
	gl.OpenMR(proj, 7, "Add sprockets", "aaaa1111", "bob")
	bin := buildAdapter(t)
	log := &logBuf{}
	p := adapter.New(adapter.Found{Slug: "gitlab", Path: bin}, adapter.DefaultConfig(), adapter.Deps{
		Log:     slog.New(slog.NewTextHandler(log, nil)),
		Creds:   memCreds{"token": token, "baseUrl": gl.URL},
		Environ: []string{"PATH=" + os.Getenv("PATH"), "SSL_CERT_FILE=" + gl.CertFile(t)},
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Process().Stop(ctx, time.Second)
		require.NotContains(t, log.String(), token, "the token never reaches the node's log")
	})
	require.Empty(t, p.Unavailable(context.Background()))
	require.True(t, p.Readiness(context.Background()).Ready)
	n := 0
	providertest.RunPoller(t, providertest.Harness{
		Provider: p,
		Subject:  mr,
		Emit: func(t providertest.T, count int) {
			for range count {
				n++
				gl.Note(proj, 7, "carol", fmt.Sprintf("note %d", n), false)
			}
		},
	})
	require.Equal(t, []string{"gitlab.merge_request.*", "gitlab.pipeline.completed", "gitlab.note.created", "gitlab.approval.*"}, p.DefaultTypes(mr))
	require.Equal(t, []string{"gitlab.merge_request.*"}, p.DefaultTypes("gitlab:"+proj))
}

// logBuf is a log sink safe for concurrent writes.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

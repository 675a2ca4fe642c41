package agentpush_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

// creds is an in-memory providers.CredentialSource.
type creds struct {
	mu     sync.Mutex
	fields map[string]string
	calls  int
}

func (c *creds) Credentials(_ context.Context, slug string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if slug != agentpush.Slug {
		return map[string]string{}, nil
	}
	out := map[string]string{}
	for k, v := range c.fields {
		out[k] = v
	}
	return out, nil
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fixture is a provider wired to a fake agentpush server.
type fixture struct {
	srv   *agentpushtest.Server
	creds *creds
	p     *agentpush.Provider
	logs  *syncBuffer
	now   time.Time
	// srvNow is the fake server's clock (push signing).
	srvNow time.Time
	url    providers.PublicURL
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newFixture starts a fake server and a provider whose stored setup points
// at it. extra fields are merged into the stored setup.
func newFixture(t *testing.T, extra map[string]string) *fixture {
	t.Helper()
	return newFixtureWith(t, extra, agentpushtest.Config{})
}

// newFixtureWith is newFixture with a server configuration; the server's
// clock is the fixture's.
func newFixtureWith(t *testing.T, extra map[string]string, cfg agentpushtest.Config) *fixture {
	t.Helper()
	f := &fixture{logs: &syncBuffer{}, now: epoch, srvNow: epoch}
	cfg.Now = func() time.Time { return f.srvNow }
	f.srv = agentpushtest.Start(t, cfg)
	f.creds = &creds{fields: map[string]string{agentpush.FieldAPIKey: f.srv.Key(), agentpush.FieldBaseURL: f.srv.URL + "/"}}
	for k, v := range extra {
		f.creds.fields[k] = v
	}
	f.p = agentpush.New(agentpush.Config{
		Creds:      f.creds,
		PublicURL:  func() providers.PublicURL { return f.url },
		HTTPClient: &http.Client{Timeout: 5 * time.Second},
		Now:        func() time.Time { return f.now },
		Log:        slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	return f
}

// spec returns a session-targeted spec over clauses.
func spec(clauses ...sentinel.Clause) sentinel.Spec {
	return sentinel.Spec{
		Match:  clauses,
		Until:  sentinel.Until{Kind: sentinel.UntilNever},
		Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "sess_1"},
	}
}

// create creates a poll sentinel on subject and returns its handle.
func (f *fixture) create(t *testing.T, subject string) sentinel.Handle {
	t.Helper()
	h, err := f.p.Create(context.Background(), providers.CreateRequest{
		SentinelID: "sen_01",
		Spec:       spec(sentinel.Clause{Subject: subject}),
		Delivery:   providers.Delivery{Mode: providers.ModePoll, IntervalMs: 15000},
	})
	require.NoError(t, err)
	return h
}

// event returns a valid PR event with id.
func event(id string) sentinel.Event {
	ref := sentinel.GitHubRef{Owner: "acme", Repo: "api", Number: 7}
	return sentinel.NewEvent(id, "agentpush://github", "github.pull_request_review.submitted",
		ref.Subject(), ref.Subjects(), epoch, "review submitted on acme/api#7", false, map[string]any{"state": "approved"})
}

// eventIDs returns the ids of evs.
func eventIDs(evs []sentinel.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

package localgh_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/localgh"
)

const repoName = "acme/widgets"

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// harness is a provider wired to a fake GitHub: credentials through the
// real gh (`gh auth token` with an isolated GH_CONFIG_DIR), requests
// in-process through the fake's proxy.
type harness struct {
	t   *testing.T
	gh  *githubtest.Server
	p   *localgh.Provider
	clk *clock
	h   sentinel.Handle
}

func requireGH(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		t.Skip("gh (GitHub CLI) is not on PATH; install it (apt-get install -y gh) to run this test")
	}
}

// newHarness starts a fake with PR #7 open (unless noPR) and a provider
// logged in as the fake's token ("" token: logged out).
func newHarness(t *testing.T, token func(*githubtest.Server) string) *harness {
	t.Helper()
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	tok := s.Token()
	if token != nil {
		tok = token(s)
	}
	clk := &clock{t: s.Now()}
	runner := github.NewRunner(github.Config{Env: s.Env(tok)})
	client, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.NewAuth(runner, ""), Now: clk.Now})
	require.NoError(t, err)
	p, err := localgh.New(localgh.Config{Runner: runner, Client: client, Now: clk.Now})
	require.NoError(t, err)
	return &harness{t: t, gh: s, p: p, clk: clk}
}

// watch creates the sentinel for subject.
func (x *harness) watch(subject string, until string) {
	x.t.Helper()
	h, err := x.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_x", Spec: sentinel.Spec{
		Match: []sentinel.Clause{{Subject: subject}}, Until: sentinel.Until{Kind: until},
	}})
	require.NoError(x.t, err)
	x.h = h
}

// poll polls once, checks every envelope, advances the handle's cursor and
// returns the events.
func (x *harness) poll() []sentinel.Event {
	x.t.Helper()
	res, err := x.p.Poll(context.Background(), x.h, 100)
	require.NoError(x.t, err)
	for _, ev := range res.Events {
		require.NoError(x.t, ev.Validate())
		require.Equal(x.t, localgh.Source, ev.Source)
	}
	x.h.Cursor = res.Cursor
	return res.Events
}

func (x *harness) status() providers.Health {
	x.t.Helper()
	st, err := x.p.Status(context.Background(), x.h)
	require.NoError(x.t, err)
	return st
}

func types(evs []sentinel.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func data(t *testing.T, ev sentinel.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &m))
	return m
}

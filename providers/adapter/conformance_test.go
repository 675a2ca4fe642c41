package adapter_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
	"github.com/agentproto/sentinel/providers/providertest"
)

// TestFeedAdapterConformance: the node's provider over the feed adapter
// passes the suite every built-in passes.
func TestFeedAdapterConformance(t *testing.T) {
	f := newFeed(t, "feed", "", nil, "")
	n := 0
	providertest.RunPoller(t, providertest.Harness{
		Provider: f.P,
		Subject:  "feed:a",
		Emit: func(t providertest.T, count int) {
			for range count {
				n++
				require.NoError(t, adaptertest.AppendFeed(f.Feed, adaptertest.Line{Subject: "feed:a", Type: "feed.x", ID: fmt.Sprintf("e%d", n)}))
			}
		},
	})
}

// TestCheckReportsFailures: the runner behind `sentinel adapter test`
// reports a hung adapter's failing checks (and skips what depends on
// them) instead of hanging or passing.
func TestCheckReportsFailures(t *testing.T) {
	f := newFeed(t, "feed", adaptertest.ModeNoStart, nil, "")
	rs := providertest.Check(providertest.Harness{Provider: f.P, Subject: "feed:a"})
	require.True(t, providertest.Failed(rs))
	require.Equal(t, "metadata", rs[0].Name)
	require.Equal(t, providertest.Fail, rs[0].Outcome)
	require.Contains(t, rs[0].Detail, "capabilities.poll")
	for _, r := range rs[1:] {
		require.Equal(t, providertest.Skip, r.Outcome, r.Name)
	}

	ok := newFeed(t, "feed", "", nil, "")
	rs = providertest.Check(providertest.Harness{Provider: ok.P, Subject: "feed:a"})
	require.False(t, providertest.Failed(rs), "%+v", rs)
}

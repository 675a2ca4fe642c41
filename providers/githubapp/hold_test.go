package githubapp_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// pauses is a Hold over a map of credentials' pause ends.
type pauses struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func (p *pauses) hold(cred string) time.Time { p.mu.Lock(); defer p.mu.Unlock(); return p.until[cred] }

func (p *pauses) set(cred string, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until[cred] = until
}

// TestAPauseHoldsEveryCallOnItsCredential: while the quota governor pauses
// a credential (a secondary limit met on any node), no call on it reaches
// GitHub: the App's (coverage listing, reconciliation) or an
// installation's (repository listing, head lookups, polls); each is refused
// as rate limited with the pause's remaining time. The pause over, they go
// out again.
func TestAPauseHoldsEveryCallOnItsCredential(t *testing.T) {
	h := newHarness(t)
	ps := &pauses{until: map[string]time.Time{}}
	h.hold = ps.hold
	p := h.provider()
	ctx := ctxT(t)
	h.gh.AddAppDelivery(githubtest.Delivery{GUID: "guid-a", Event: "pull_request", StatusCode: http.StatusBadGateway})

	ps.set("app", h.gh.Now().Add(time.Minute))
	err := p.Sync(ctx)
	require.Equal(t, providers.ReasonRateLimited, providers.ReasonOf(err), "%v", err)
	_, err = p.Reconcile(ctx, hdEmpty())
	require.Equal(t, providers.ReasonRateLimited, providers.ReasonOf(err), "%v", err)
	require.Empty(t, h.gh.Requests(), "no call on the paused App credential")

	h.gh.Advance(time.Minute)
	require.NoError(t, p.Sync(ctx))
	c, err := p.InstallationClient(ctx, h.inst)
	require.NoError(t, err)
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	require.NoError(t, err)

	ps.set("installation:"+strconv.FormatInt(h.inst, 10), h.gh.Now().Add(2*time.Minute))
	sent := len(h.gh.Requests())
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, providers.ReasonRateLimited, pe.Reason)
	require.Equal(t, 2*time.Minute, pe.RetryAfter)
	require.Contains(t, pe.Message, "secondary rate limit pause")
	require.Len(t, h.gh.Requests(), sent, "no call on the paused installation")
	res, err := p.Reconcile(ctx, hdEmpty())
	require.NoError(t, err, "the App's own calls are another credential")
	require.Equal(t, 1, res.Redelivered)
}

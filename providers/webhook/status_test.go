package webhook

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle
		ok     bool
		detail string
	}{
		{"ok", nil, true, "is active"},
		{"disabled", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			h.patchHook(hd, `{"active":false}`)
			return hd
		}, false, "disabled"},
		{"points elsewhere", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			h.patchHook(hd, `{"config":{"url":"https://elsewhere.example.test/hook"}}`)
			return hd
		}, false, "no longer points at this daemon"},
		{"public URL changed since", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			h.setURL("https://moved.example.test")
			return hd
		}, false, "no longer points at this daemon"},
		{"deleted", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			id, _ := strconv.ParseInt(hd.RemoteID, 10, 64)
			h.gh.DeleteHook(testRepo, id)
			return hd
		}, false, "deleted"},
		{"record missing", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			require.NoError(t, p.store().remove(context.Background(), h.record(testRepo)))
			return hd
		}, false, "record is missing"},
		{"holder not registered", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			other := sentinel.Handle{Provider: Slug, RemoteID: hd.RemoteID, State: map[string]any{"repo": testRepo, "hookKey": hd.StateString("hookKey"), "holder": "wh_ffffffffffffffff"}}
			return other
		}, false, "record is missing"},
		{"empty handle", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			return sentinel.Handle{Provider: Slug}
		}, false, "record is missing"},
		{"gh failing", func(h *harness, p *Provider, hd sentinel.Handle) sentinel.Handle {
			h.gh.ServerErrors("/repos/acme/widgets/hooks/", 1)
			return hd
		}, false, "HTTP 502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, githubtest.Options{})
			p := h.provider("node-a")
			hd := h.create(p, "github:acme/widgets#1")
			if tt.break_ != nil {
				hd = tt.break_(h, p, hd)
			}
			st, err := p.Status(ctxT(t), hd)
			require.NoError(t, err)
			h.seen(st)
			require.Equal(t, tt.ok, st.OK, st.Detail)
			require.Contains(t, st.Detail, tt.detail)
		})
	}
}

func TestStatusReportsReconciliation(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	hd := h.create(p, "github:acme/widgets")
	_, err := p.Reconcile(ctxT(t), hd)
	require.NoError(t, err)
	st, err := p.Status(ctxT(t), hd)
	require.NoError(t, err)
	require.True(t, st.OK, st.Detail)
	rc, ok := st.Extra["reconcile"].(map[string]any)
	require.True(t, ok, "%v", st.Extra)
	require.Equal(t, 0, rc["redelivered"])
	require.NotEmpty(t, rc["lastRun"])
	require.Equal(t, 1, st.Extra["holders"])
	h.seen(st)
}

// patchHook changes the hook behind the provider's back through gh.
func (h *harness) patchHook(hd sentinel.Handle, body string) {
	h.t.Helper()
	status, _, _, err := h.runner.API(context.Background(), http.MethodPatch, "repos/"+testRepo+"/hooks/"+hd.RemoteID, []byte(body))
	require.NoError(h.t, err)
	require.Equal(h.t, http.StatusOK, status)
}

package httpapi_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

type memFollows struct{ byKey map[string]sentinel.Follow }

func (m *memFollows) Upsert(_ context.Context, req sentinel.FollowRequest, _ string) (sentinel.Follow, bool, error) {
	if req.Follower == "" {
		return sentinel.Follow{}, false, sentinel.Errorf(sentinel.CodeNoFollower, "no follower")
	}
	if req.Follower == "ghost" {
		return sentinel.Follow{}, false, sentinel.Errorf(sentinel.CodeSessionNotFound, "unknown follower")
	}
	if len(req.Selector.SessionIDs) == 0 && !req.Selector.All && req.Selector.CwdPrefix == "" {
		return sentinel.Follow{}, false, sentinel.Errorf(sentinel.CodeInvalidSelector, "empty selector")
	}
	f, had := m.byKey[req.Key]
	if !had {
		f = sentinel.Follow{ID: "fol_01", Key: req.Key, Follower: req.Follower}
		m.byKey[req.Key] = f
	}
	return f, !had, nil
}

func (m *memFollows) List(context.Context, string) ([]sentinel.Follow, error) { return nil, nil }

func (m *memFollows) Remove(_ context.Context, idOrKey string) (string, error) {
	if f, ok := m.byKey[idOrKey]; ok {
		delete(m.byKey, idOrKey)
		return f.ID, nil
	}
	return "", sentinel.Errorf(sentinel.CodeFollowNotFound, "follow not found")
}

func TestFollowHandlers(t *testing.T) {
	r := chi.NewRouter()
	httpapi.FollowRoutes(r, &memFollows{byKey: map[string]sentinel.Follow{}})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	cases := []struct {
		name, method, path, body string
		status                   int
		check                    func(t *testing.T, out map[string]any)
	}{
		{"created", "POST", "/follows", `{"follower":"c","key":"k","selector":{"all":true}}`, 201, func(t *testing.T, out map[string]any) {
			require.Equal(t, "fol_01", out["id"], "the body is the follow record")
		}},
		{"upserted by key", "POST", "/follows", `{"follower":"c","key":"k","selector":{"all":true}}`, 200, nil},
		{"malformed is invalid_input", "POST", "/follows", `{"follower":"c","selector":{"all":1}}`, 400, func(t *testing.T, out map[string]any) {
			require.Equal(t, "invalid_input", out["error"])
		}},
		{"unknown field is invalid_input", "POST", "/follows", `{"follower":"c","selector":{"all":true},"x":1}`, 400, func(t *testing.T, out map[string]any) {
			require.Equal(t, "invalid_input", out["error"])
		}},
		{"no follower", "POST", "/follows", `{"selector":{"all":true}}`, 400, func(t *testing.T, out map[string]any) {
			require.Equal(t, "no_follower", out["error"])
		}},
		{"invalid selector", "POST", "/follows", `{"follower":"c","selector":{}}`, 400, func(t *testing.T, out map[string]any) {
			require.Equal(t, "invalid_selector", out["error"])
		}},
		{"unknown follower", "POST", "/follows", `{"follower":"ghost","selector":{"all":true}}`, 404, func(t *testing.T, out map[string]any) {
			require.Equal(t, "session_not_found", out["error"])
		}},
		{"list", "GET", "/follows?follower=c", ``, 200, func(t *testing.T, out map[string]any) {
			require.Equal(t, []any{}, out["follows"])
		}},
		{"delete", "DELETE", "/follows/k", ``, 200, func(t *testing.T, out map[string]any) {
			require.Equal(t, map[string]any{"ok": true, "id": "fol_01"}, out)
		}},
		{"delete unknown", "DELETE", "/follows/k", ``, 404, func(t *testing.T, out map[string]any) {
			require.Equal(t, "follow_not_found", out["error"])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := do(t, tc.method, srv.URL+tc.path, tc.body)
			require.Equal(t, tc.status, status, "%v", out)
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

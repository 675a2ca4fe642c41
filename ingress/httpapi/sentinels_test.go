package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// statusOnly serves Status; the other methods are not called.
type statusOnly struct{ api.Sentinels }

func (statusOnly) Status(_ context.Context, id string) (api.SentinelStatus, error) {
	if id != "sen_1" {
		return api.SentinelStatus{}, sentinel.Errorf(sentinel.CodeSentinelNotFound, "sentinel not found")
	}
	return api.SentinelStatus{OK: true, Status: sentinel.StatusActive, Provider: "local-gh"}, nil
}

func TestStatusAnswerNamesTheSentinel(t *testing.T) {
	r := chi.NewRouter()
	httpapi.SentinelRoutes(r, statusOnly{})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + "/sentinels/sen_1/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, "sen_1", out["id"], "a top-level id names the sentinel")
	require.Equal(t, "local-gh", out["status"].(map[string]any)["provider"])

	st, err := apiclient.Sentinels{C: apiclient.New(srv.URL, "")}.Status(context.Background(), "sen_1")
	require.NoError(t, err)
	require.Equal(t, "local-gh", st.Provider)
}

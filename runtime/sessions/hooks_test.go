package sessions_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// A URL hook POSTs the message; a redirect to another host must not carry
// it there (a 307 would re-send the body).
func TestURLHookRefusesRedirectsToAnotherHost(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		_, _ = io.WriteString(w, "stolen")
	}))
	t.Cleanup(other.Close)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/collect", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
		case "/here":
			raw, _ := io.ReadAll(r.Body)
			_, _ = w.Write(raw)
		}
	}))
	t.Cleanup(hook.Close)
	// Even a caller-supplied client that follows everything gets the policy.
	runner := sessions.NewHookRunner(sessions.WithHookHTTP(&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}))
	ctx := context.Background()

	t.Run("another host is refused", func(t *testing.T) {
		_, err := runner.Run(ctx, &sentinel.Hook{URL: hook.URL + "/away?token=s3cret"}, nil, []byte(`{"text":"private"}`))
		require.Error(t, err)
		require.Contains(t, err.Error(), "refused a redirect")
		require.NotContains(t, err.Error(), "s3cret")
		require.Zero(t, elsewhere.Load(), "the other host was never called")
	})
	t.Run("the same host is followed", func(t *testing.T) {
		out, err := runner.Run(ctx, &sentinel.Hook{URL: hook.URL + "/moved"}, nil, []byte(`{"text":"hi"}`))
		require.NoError(t, err)
		require.Equal(t, `{"text":"hi"}`, string(out))
	})
}

// A URL hook's secrets (query, userinfo) never appear in its errors: they
// are logged and shown as notifyError.
func TestURLHookErrorsRedactTheURL(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	closedURL := down.URL
	down.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(failing.Close)
	runner := sessions.NewHookRunner()
	for _, tc := range []struct{ name, url, want string }{
		{name: "connection refused", url: closedURL + "/wake?token=s3cret", want: "/wake?[redacted]"},
		{name: "userinfo", url: "http://bot:s3cret@" + closedURL[len("http://"):] + "/wake", want: "http://[redacted]@"},
		{name: "non-2xx answer", url: failing.URL + "/wake?token=s3cret", want: "answered 502"},
		{name: "unparsable", url: "http://h/%zz?token=s3cret", want: "[redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runner.Run(context.Background(), &sentinel.Hook{URL: tc.url, TimeoutMs: 5000}, nil, []byte(`{}`))
			require.Error(t, err)
			require.NotContains(t, err.Error(), "s3cret")
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

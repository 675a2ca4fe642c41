package github_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func requireGH(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		t.Skip("gh (GitHub CLI) is not on PATH; install it (apt-get install -y gh) to run this test")
	}
}

func TestRunnerMissingGH(t *testing.T) {
	r := github.NewRunner(github.Config{Path: filepath.Join(t.TempDir(), "gh")})
	_, _, err := r.Run(context.Background(), nil, "--version")
	require.ErrorIs(t, err, github.ErrGHNotInstalled)
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "install the GitHub CLI (gh)")

	status, _, _, err := r.API(context.Background(), http.MethodGet, "user", nil)
	require.Zero(t, status)
	require.ErrorIs(t, err, github.ErrGHNotInstalled)
}

func TestRunnerExitErrorRedactsToken(t *testing.T) {
	// A stand-in gh that leaks its token and a token-shaped string on stderr.
	script := filepath.Join(t.TempDir(), "gh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"failed with $GH_TOKEN and ghp_abcdefghijklmnopqrstuvwxyz0123\" >&2\nexit 3\n"), 0o700))
	r := github.NewRunner(github.Config{Path: script, Env: []string{"GH_TOKEN=sekrit-token-value"}})
	_, stderr, err := r.Run(context.Background(), nil, "api", "user")
	var ee *github.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 3, ee.Code)
	require.NotContains(t, string(stderr), "sekrit-token-value")
	require.NotContains(t, err.Error(), "sekrit-token-value")
	require.NotContains(t, err.Error(), "ghp_abcdefghijklmnopqrstuvwxyz0123")
	require.Contains(t, err.Error(), "failed with [REDACTED] and [REDACTED]")
}

func TestRunnerStdinNotArgv(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	s.AddRepo("acme/widgets")
	r := github.NewRunner(github.Config{Env: s.Env(s.Token())})
	body := []byte(`{"name":"web","events":["pull_request"],"config":{"url":"https://example.test/in","content_type":"json","secret":"topsecret"}}`)
	status, hdr, resp, err := r.API(context.Background(), http.MethodPost, "/repos/acme/widgets/hooks", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
	require.Equal(t, "application/json; charset=utf-8", hdr.Get("Content-Type"))
	require.Contains(t, string(resp), `"secret":"********"`)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	require.JSONEq(t, string(body), string(reqs[0].Body))
	s.Verify(t)
}

func TestRunnerAPIStatuses(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	r := github.NewRunner(github.Config{Env: s.Env(s.Token())})
	ctx := context.Background()

	status, hdr, body, err := r.API(ctx, "", "repos/acme/widgets/pulls/7", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), `"number":7`)
	etag := hdr.Get("ETag")
	require.NotEmpty(t, etag)

	status, _, body, err = r.APIWithHeader(ctx, http.MethodGet, "repos/acme/widgets/pulls/7", http.Header{"If-None-Match": {etag}}, nil)
	require.NoError(t, err, "a 304 is not an error although gh exits 1")
	require.Equal(t, http.StatusNotModified, status)
	require.Empty(t, body)

	status, _, body, err = r.API(ctx, http.MethodDelete, "repos/acme/widgets/hooks/12345", nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, providers.ReasonNotFound, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "Not Found")
	require.Contains(t, string(body), "Not Found")

	s.ServerErrors("/repos/acme/widgets/pulls/7", 1)
	status, _, _, err = r.API(ctx, http.MethodGet, "repos/acme/widgets/pulls/7", nil)
	require.Equal(t, http.StatusBadGateway, status)
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.True(t, pe.Retryable)
	s.Verify(t)
}

func TestRunnerAPILoggedOut(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	r := github.NewRunner(github.Config{Env: s.Env("")})
	status, _, _, err := r.API(context.Background(), http.MethodGet, "user", nil)
	require.Zero(t, status)
	require.Equal(t, providers.ReasonAuth, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "gh auth login")
}

func TestParseAPIOutput(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		status  int
		etag    string
		body    string
		wantErr error
	}{
		{name: "gh 2.23 shape", in: "HTTP/1.1 200 OK\nContent-Type: application/json\r\nEtag: W/\"abc\"\r\n\r\n{\"a\":1}", status: 200, etag: `W/"abc"`, body: `{"a":1}`},
		{name: "not modified", in: "HTTP/1.1 304 Not Modified\nEtag: \"x\"\r\n\r\n", status: 304, etag: `"x"`},
		{name: "no body no blank line", in: "HTTP/2.0 204 No Content\r\nX-A: b\r\n", status: 204},
		{name: "lf only", in: "HTTP/1.1 404 Not Found\nA: b\n\n{}", status: 404, body: "{}"},
		{name: "empty", in: "", wantErr: github.ErrNoStatusLine},
		{name: "plain json", in: `{"a":1}`, wantErr: github.ErrNoStatusLine},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := github.ParseAPIOutput([]byte(tc.in))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.status, got.Status)
			require.Equal(t, tc.etag, got.Header.Get("ETag"))
			require.Equal(t, tc.body, string(got.Body))
		})
	}
	_, err := github.ParseAPIOutput([]byte("HTTP/1.1 abc OK\n\n"))
	require.Error(t, err)
	require.False(t, errors.Is(err, github.ErrNoStatusLine))
}

func FuzzParseAPIOutput(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\nEtag: W/\"abc\"\r\n\r\n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := github.ParseAPIOutput(in)
		if err != nil {
			return
		}
		if got.Status < 100 || got.Status > 999 {
			t.Fatalf("status %d out of range", got.Status)
		}
		if !strings.HasPrefix(got.Proto, "HTTP/") {
			t.Fatalf("proto %q", got.Proto)
		}
		if len(got.Body) > len(in) {
			t.Fatal("body longer than input")
		}
	})
}

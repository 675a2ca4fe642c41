package agentpush_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

func TestCreateBodyMapping(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api#7")

	reqs := f.srv.RequestsTo(http.MethodPost, "/subscriptions")
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, "Bearer "+f.srv.Key(), r.Header.Get("Authorization"))
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.Equal(t, "application/json", r.Header.Get("Accept"))
	require.NotContains(t, string(r.Body), f.srv.Key())
	require.NotContains(t, r.Path+r.Query, f.srv.Key())

	var body map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &body))
	types := make([]any, 0)
	for _, ty := range sentinel.DefaultPRTypes() {
		types = append(types, ty)
	}
	require.Equal(t, map[string]any{
		"name":         "agentproto sentinel sen_01",
		"source":       "github",
		"subject":      "github:acme/api#7",
		"types":        types,
		"mode":         "poll",
		"consumer_ref": "agentproto:sentinel:sen_01",
		"until":        map[string]any{"kind": "never"},
	}, body)

	require.Equal(t, agentpush.Slug, h.Provider)
	require.Equal(t, "sub_1", h.RemoteID)
	require.Equal(t, "0", h.Cursor)
	require.Equal(t, map[string]any{"mode": "poll", "consumerRef": "agentproto:sentinel:sen_01", "signature": "v2"}, h.State)
}

func TestCreateTypes(t *testing.T) {
	cases := []struct {
		name    string
		clauses []sentinel.Clause
		want    []string // nil means JSON null
		source  string
	}{
		{name: "github defaults", clauses: []sentinel.Clause{{Subject: "github:acme/api"}}, want: sentinel.DefaultPRTypes(), source: "github"},
		{name: "non-github defaults to null", clauses: []sentinel.Clause{{Subject: "Linear:team/ENG-1"}}, want: nil, source: "linear"},
		{name: "explicit star is null", clauses: []sentinel.Clause{{Subject: "github:acme/api#7", Types: []string{"github.pull_request.*", "*"}}}, want: nil, source: "github"},
		{name: "union of clauses deduplicated", clauses: []sentinel.Clause{
			{Subject: "github:acme/api#7", Types: []string{"github.pull_request.closed", "github.check_suite.completed"}},
			{Subject: "github:acme/api#7", Types: []string{"github.check_suite.completed", "github.issue_comment.created"}},
		}, want: []string{"github.pull_request.closed", "github.check_suite.completed", "github.issue_comment.created"}, source: "github"},
		{name: "a clause without types contributes the defaults", clauses: []sentinel.Clause{
			{Subject: "jira:ENG-1", Types: []string{"jira.issue.updated"}},
			{Subject: "jira:ENG-1"},
		}, want: nil, source: "jira"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			_, err := f.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(tc.clauses...)})
			require.NoError(t, err)
			sub, ok := f.srv.Subscription("sub_1")
			require.True(t, ok)
			require.Equal(t, tc.want, sub.Types)
			require.Equal(t, tc.source, sub.Source)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(f.srv.Requests()[0].Body, &raw))
			if tc.want == nil {
				require.Equal(t, "null", string(raw["types"]))
			}
		})
	}
}

func TestCreateRefusesBadSpecsWithoutHTTP(t *testing.T) {
	cases := []struct {
		name    string
		fields  map[string]string
		clauses []sentinel.Clause
		want    string
	}{
		{name: "multi subject", clauses: []sentinel.Clause{{Subject: "github:acme/api#7"}, {Subject: "github:acme/api#8"}}, want: "one subject per sentinel"},
		{name: "not scheme:path", clauses: []sentinel.Clause{{Subject: "1github:acme"}}, want: "<scheme>:<path>"},
		{name: "no clause", want: "one match clause"},
		{name: "no key", fields: map[string]string{agentpush.FieldAPIKey: "  "}, clauses: []sentinel.Clause{{Subject: "github:acme/api"}},
			want: "run setup_sentinel_provider (provider agentpush, field apiKey)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.fields)
			_, err := f.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(tc.clauses...)})
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
			require.Empty(t, f.srv.Requests())
		})
	}
}

func TestCreateWithoutSentinelIDIsUnbound(t *testing.T) {
	f := newFixture(t, nil)
	h, err := f.p.Create(context.Background(), providers.CreateRequest{Spec: spec(sentinel.Clause{Subject: "github:acme/api"})})
	require.NoError(t, err)
	ref := h.StateString("consumerRef")
	require.Regexp(t, `^agentproto:sentinel:unbound_[0-9a-f]{12}$`, ref)
	sub, _ := f.srv.Subscription(h.RemoteID)
	require.Equal(t, ref, sub.ConsumerRef)
}

// recorder is a RoundTripper that records request URLs and answers a
// fixed subscription.
type recorder struct{ urls []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.urls = append(r.urls, req.URL.String())
	return &http.Response{
		StatusCode: http.StatusCreated,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"subscription":{"id":"sub_x","status":"active"}}`)),
		Request:    req,
	}, nil
}

func TestBaseURLPrecedence(t *testing.T) {
	cases := []struct {
		name     string
		override string
		stored   string
		want     string
	}{
		{name: "default", want: "https://api.agentpush.io/subscriptions"},
		{name: "stored setup field, slashes stripped", stored: "https://eu.agentpush.example//", want: "https://eu.agentpush.example/subscriptions"},
		{name: "config override wins", override: "https://local.example/", stored: "https://eu.agentpush.example", want: "https://local.example/subscriptions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			p := agentpush.New(agentpush.Config{
				Creds:      &creds{fields: map[string]string{agentpush.FieldAPIKey: "k", agentpush.FieldBaseURL: tc.stored}},
				BaseURL:    tc.override,
				HTTPClient: &http.Client{Transport: rec},
			})
			_, err := p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(sentinel.Clause{Subject: "github:acme/api"})})
			require.NoError(t, err)
			require.Equal(t, []string{tc.want}, rec.urls)
		})
	}
}

func TestHTTPErrorsAreClassified(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(s *agentpushtest.Server)
		reason    providers.Reason
		retryable bool
		message   string
	}{
		{name: "wrong key", setup: func(s *agentpushtest.Server) { s.SetKey("another-key") }, reason: providers.ReasonAuth,
			message: "agentpush POST /subscriptions → HTTP 401: invalid api key (the API key was rejected: run setup_sentinel_provider with provider agentpush and a valid apiKey)"},
		{name: "forbidden", setup: func(s *agentpushtest.Server) { s.FailAuth(http.StatusForbidden) }, reason: providers.ReasonForbidden,
			message: "agentpush POST /subscriptions → HTTP 403: api key lacks the subscriptions scope (the API key may not do this: check the key's workspace and permissions in agentpush, then run setup_sentinel_provider again)"},
		{name: "server error", setup: func(s *agentpushtest.Server) { s.FailNext(http.StatusServiceUnavailable, 1) }, reason: providers.ReasonServer, retryable: true,
			message: "agentpush POST /subscriptions → HTTP 503: injected failure"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			tc.setup(f.srv)
			_, err := f.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(sentinel.Clause{Subject: "github:acme/api"})})
			require.Error(t, err)
			var pe *providers.Error
			require.True(t, errors.As(err, &pe))
			require.Equal(t, tc.reason, pe.Reason)
			require.Equal(t, tc.retryable, pe.Retryable)
			require.Equal(t, tc.message, err.Error())
		})
	}
}

func TestStatusSurfacesHTTPErrors(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(s *agentpushtest.Server)
		detail string
		reason string
	}{
		{name: "unauthorized", setup: func(s *agentpushtest.Server) { s.FailAuth(http.StatusUnauthorized) }, detail: "HTTP 401", reason: "auth"},
		{name: "forbidden", setup: func(s *agentpushtest.Server) { s.FailAuth(http.StatusForbidden) }, detail: "HTTP 403", reason: "forbidden"},
		{name: "server error", setup: func(s *agentpushtest.Server) { s.FailNext(http.StatusInternalServerError, 1) }, detail: "HTTP 500", reason: "server"},
		{name: "deleted", setup: func(s *agentpushtest.Server) { s.Delete("sub_1") }, detail: "the agentpush subscription sub_1 was deleted", reason: "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			h := f.create(t, "github:acme/api")
			tc.setup(f.srv)
			hl, err := f.p.Status(context.Background(), h)
			require.NoError(t, err)
			require.False(t, hl.OK)
			require.Contains(t, hl.Detail, tc.detail)
			require.Equal(t, tc.reason, hl.Extra["reason"])
		})
	}
}

func TestNetworkErrorIsRetryable(t *testing.T) {
	srv := agentpushtest.Start(t, agentpushtest.Config{})
	p := agentpush.New(agentpush.Config{
		Creds:   &creds{fields: map[string]string{agentpush.FieldAPIKey: srv.Key(), agentpush.FieldBaseURL: "http://127.0.0.1:1"}},
		Timeout: 2 * time.Second,
	})
	_, err := p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(sentinel.Clause{Subject: "github:acme/api"})})
	require.ErrorContains(t, err, "agentpush POST /subscriptions failed: ")
	require.Equal(t, providers.ReasonNetwork, providers.ReasonOf(err))
}

package githubtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// gh runs the real gh against the fake and returns stdout, stderr and the
// exit code.
func gh(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	path, err := exec.LookPath("gh")
	if err != nil {
		t.Skip("gh (GitHub CLI) is not on PATH; install it (apt-get install -y gh) to run this test")
	}
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errOut.String(), code
}

func TestGHAPIConditional(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	env := s.Env(s.Token())
	out, _, code := gh(t, env, "", "api", "-i", "user")
	require.Equal(t, 0, code)
	require.Contains(t, out, "HTTP/1.1 200")
	require.Contains(t, out, `"login":"octocat"`)
	etag := headerLine(out, "Etag")
	require.NotEmpty(t, etag)

	out, errOut, code := gh(t, env, "", "api", "-i", "user", "-H", "If-None-Match: "+etag)
	require.Equal(t, 1, code)
	require.Contains(t, out, "HTTP/1.1 304")
	require.Contains(t, errOut, "HTTP 304")
	require.Equal(t, 1, s.QuotaUsed(), "a 304 costs no quota")
	s.Verify(t)
}

func headerLine(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimRight(l, "\r"), ": "); ok && strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func TestGHAuth(t *testing.T) {
	tests := []struct {
		name     string
		opts     githubtest.Options
		token    string
		wantCode int
		wantErr  string
	}{
		{name: "logged in", token: githubtest.DefaultToken, wantErr: "Logged in to github.com"},
		{name: "fine grained token without scopes", opts: githubtest.Options{NoScopes: true}, token: githubtest.DefaultToken, wantErr: "Logged in"},
		{name: "missing read:org", opts: githubtest.Options{Scopes: "repo"}, token: githubtest.DefaultToken, wantCode: 1, wantErr: "read:org"},
		{name: "bad token", token: "ghp_wrongwrongwrongwrongwrong0000", wantCode: 1},
		{name: "logged out", token: "", wantCode: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := githubtest.New(t, tc.opts)
			_, errOut, code := gh(t, s.Env(tc.token), "", "auth", "status")
			require.Equal(t, tc.wantCode, code, errOut)
			require.Contains(t, errOut, tc.wantErr)
			s.Verify(t)
		})
	}
}

func TestGHAuthToken(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	out, _, code := gh(t, s.Env(s.Token()), "", "auth", "token")
	require.Equal(t, 0, code)
	require.Equal(t, s.Token(), strings.TrimSpace(out))
	require.Empty(t, s.Requests(), "gh auth token is offline")

	_, errOut, code := gh(t, s.Env(""), "", "auth", "token")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no oauth token")
}

func TestGHHooksCRUD(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.AddRepo("acme/widgets")
	env := s.Env(s.Token())

	body := `{"name":"web","active":true,"events":["pull_request"],"config":{"url":"https://example.test/inbound/sentinel-k","content_type":"json","secret":"s3cret","insecure_ssl":"0"}}`
	out, _, code := gh(t, env, body, "api", "repos/acme/widgets/hooks", "--method", "POST", "--input", "-")
	require.Equal(t, 0, code)
	var created struct {
		ID     int64 `json:"id"`
		Config struct {
			Secret string `json:"secret"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	require.Equal(t, "********", created.Config.Secret)
	require.Equal(t, "s3cret", s.Hooks("acme/widgets")[0].Secret)
	hookPath := "repos/acme/widgets/hooks/" + itoa(created.ID)

	_, _, code = gh(t, env, `{"active":false,"add_events":["status"]}`, "api", hookPath, "--method", "PATCH", "--input", "-")
	require.Equal(t, 0, code)
	h := s.Hooks("acme/widgets")[0]
	require.False(t, h.Active)
	require.Equal(t, []string{"pull_request", "status"}, h.Events)

	did := s.AddDelivery("acme/widgets", created.ID, githubtest.Delivery{Event: "pull_request", Action: "closed", StatusCode: 500})
	out, _, code = gh(t, env, "", "api", hookPath+"/deliveries")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Invalid HTTP Response: 500")
	_, _, code = gh(t, env, "", "api", hookPath+"/deliveries/"+itoa(did)+"/attempts", "--method", "POST")
	require.Equal(t, 0, code)
	require.Equal(t, []githubtest.Redelivery{{Repo: "acme/widgets", HookID: created.ID, DeliveryID: did}}, s.Redeliveries())

	_, _, code = gh(t, env, "", "api", hookPath, "--method", "DELETE")
	require.Equal(t, 0, code)
	out, errOut, code := gh(t, env, "", "api", hookPath)
	require.Equal(t, 1, code)
	require.Contains(t, out, "Not Found")
	require.Contains(t, errOut, "HTTP 404")

	out, _, code = gh(t, env, `{"name":"web","config":{}}`, "api", "repos/acme/widgets/hooks", "--method", "POST", "--input", "-")
	require.Equal(t, 1, code)
	require.Contains(t, out, "Validation Failed")
	s.Verify(t)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestUnexpectedRequests(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	out, _, code := gh(t, s.Env(s.Token()), "", "api", "repos/acme/widgets/branches")
	require.Equal(t, 1, code)
	require.Contains(t, out, "Not Found")
	require.Equal(t, []string{"GET /repos/acme/widgets/branches"}, s.Unexpected())
}

// get does one GET through the fake's in-process client.
func get(t *testing.T, s *githubtest.Server, path, etag string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://api.github.com"+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := s.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

func TestRESTStateAndETags(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7, Title: "Add sprockets"})
	head := s.Head("acme/widgets", 7)

	resp, body := get(t, s, "/repos/acme/widgets/pulls/7", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"state":"open"`)
	require.Equal(t, "4999", resp.Header.Get("X-RateLimit-Remaining"))
	etag := resp.Header.Get("ETag")
	resp, _ = get(t, s, "/repos/acme/widgets/pulls/7", etag)
	require.Equal(t, http.StatusNotModified, resp.StatusCode)

	s.AddReview("acme/widgets", 7, githubtest.Review{User: "bob", State: "APPROVED"})
	s.SetCheckRun("acme/widgets", head, "build", "completed", "success")
	s.SetStatus("acme/widgets", head, "ci/legacy", "failure")
	s.AddComment("acme/widgets", 7, githubtest.Comment{User: "dependabot[bot]", Body: "hi"})
	s.Merge("acme/widgets", 7, "carol")

	resp, body = get(t, s, "/repos/acme/widgets/pulls/7", etag)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"merged":true`)
	require.Contains(t, string(body), `"login":"carol"`)
	_, body = get(t, s, "/repos/acme/widgets/pulls/7/reviews?per_page=100", "")
	require.Contains(t, string(body), `"state":"APPROVED"`)
	_, body = get(t, s, "/repos/acme/widgets/commits/"+head+"/check-runs?per_page=100", "")
	require.Contains(t, string(body), `"conclusion":"success"`)
	_, body = get(t, s, "/repos/acme/widgets/commits/"+head+"/status", "")
	require.Contains(t, string(body), `"state":"failure"`)
	_, body = get(t, s, "/repos/acme/widgets/issues/7/comments?since=2026-11-01T10:00:00Z", "")
	require.Contains(t, string(body), `"type":"Bot"`)
	_, body = get(t, s, "/repos/acme/widgets/issues/7/comments?since=2030-01-01T00:00:00Z", "")
	require.Equal(t, "[]", string(body))
	_, body = get(t, s, "/repos/acme/widgets/pulls?state=all&sort=updated&direction=desc&per_page=30", "")
	require.Contains(t, string(body), `"number":7`)
	require.NotContains(t, string(body), `"merged":`, "the list omits merged")
	resp, _ = get(t, s, "/repos/acme/widgets/pulls/99", "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	s.Verify(t)
}

func TestFaults(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 1})
	s.SecondaryRateLimit("/repos/acme/widgets/pulls", 90*time.Second, 1)
	resp, body := get(t, s, "/repos/acme/widgets/pulls/1", "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "90", resp.Header.Get("Retry-After"))
	require.Contains(t, string(body), "secondary rate limit")
	resp, _ = get(t, s, "/repos/acme/widgets/pulls/1", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "the fault was used up")

	s.ServerErrors("/repos/", 2)
	for range 2 {
		resp, _ = get(t, s, "/repos/acme/widgets/pulls/1", "")
		require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	}
	s.TooManyRequests("", time.Second, 1)
	resp, _ = get(t, s, "/user", "")
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	s.BadCredentials(1)
	resp, _ = get(t, s, "/user", "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = get(t, s, "/user", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 7, len(s.Requests()))
	s.Verify(t)
}

func TestPaginationLikeGitHub(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	for i := range 150 {
		s.AddReview("acme/widgets", 7, githubtest.Review{User: "r" + strconv.Itoa(i), State: "COMMENTED"})
	}
	resp, body := get(t, s, "/repos/acme/widgets/pulls/7/reviews?per_page=100", "")
	var first []map[string]any
	require.NoError(t, json.Unmarshal(body, &first))
	require.Len(t, first, 100)
	require.Equal(t, "r0", first[0]["user"].(map[string]any)["login"], "oldest first")
	link := resp.Header.Get("Link")
	require.Regexp(t, `^<https://api\.github\.com/repositories/\d+/pulls/7/reviews\?page=2&per_page=100>; rel="next", `+
		`<https://api\.github\.com/repositories/\d+/pulls/7/reviews\?page=2&per_page=100>; rel="last"$`, link)
	next := strings.TrimPrefix(link[1:strings.IndexByte(link, '>')], "https://api.github.com")

	resp, body = get(t, s, next, "")
	var second []map[string]any
	require.NoError(t, json.Unmarshal(body, &second))
	require.Len(t, second, 50)
	require.Equal(t, "r149", second[49]["user"].(map[string]any)["login"])
	require.Contains(t, resp.Header.Get("Link"), `page=1&per_page=100>; rel="prev"`)
	require.NotContains(t, resp.Header.Get("Link"), `rel="next"`)

	// The ETag covers the body only: page 1 stays 304 as the list grows,
	// and its 304 carries the fresh Link, as GitHub's does.
	resp, _ = get(t, s, "/repos/acme/widgets/pulls/7/reviews?per_page=100", "")
	etag := resp.Header.Get("ETag")
	for range 60 {
		s.AddReview("acme/widgets", 7, githubtest.Review{User: "late", State: "COMMENTED"})
	}
	resp, _ = get(t, s, "/repos/acme/widgets/pulls/7/reviews?per_page=100", etag)
	require.Equal(t, http.StatusNotModified, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Link"), `page=3&per_page=100>; rel="last"`)

	// The real gh follows the Link header through the /repositories/ID form.
	out, _, code := gh(t, s.Env(s.Token()), "", "api", "--paginate", "repos/acme/widgets/pulls/7/reviews?per_page=100")
	require.Equal(t, 0, code)
	require.Equal(t, 210, strings.Count(out, `"submitted_at"`))
	require.Equal(t, 3, s.Count("GET", "/repositories/"), "two next pages by gh, one by hand")
	s.Verify(t)
}

func getJSON(t *testing.T, s *githubtest.Server, path string, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://api.github.com"+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	resp, err := s.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	}
	return resp.StatusCode
}

// TestForkPRsReviewCommentsAndJobs: a fork PR names its head repository;
// the PR of a commit, a PR's and a review's inline comments (a reply is its
// own review's) and an Actions job with its steps are served.
func TestForkPRsReviewCommentsAndJobs(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	sha := githubtest.SHA("fork-head")
	s.OpenPR("acme/widgets", githubtest.PR{Number: 4, Head: sha, HeadRepo: "contrib/widgets"})
	var pr struct {
		Head struct {
			Repo struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"base"`
	}
	require.Equal(t, 200, getJSON(t, s, "/repos/acme/widgets/pulls/4", &pr))
	require.Equal(t, "contrib/widgets", pr.Head.Repo.FullName)
	require.Equal(t, "acme/widgets", pr.Base.Repo.FullName)

	var pulls []struct {
		Number int `json:"number"`
	}
	require.Equal(t, 200, getJSON(t, s, "/repos/acme/widgets/commits/"+sha+"/pulls", &pulls))
	require.Len(t, pulls, 1)
	require.Equal(t, 4, pulls[0].Number)

	rid := s.AddReview("acme/widgets", 4, githubtest.Review{User: "bob", State: "commented",
		Comments: []githubtest.InlineComment{{Path: "main.go", Line: 3, Body: "nit"}, {Path: "a.go", Line: 0, Body: "outdated"}}})
	var cs []struct {
		ID       int64  `json:"id"`
		ReviewID int64  `json:"pull_request_review_id"`
		Path     string `json:"path"`
		Line     *int   `json:"line"`
		Body     string `json:"body"`
	}
	require.Equal(t, 200, getJSON(t, s, "/repos/acme/widgets/pulls/4/comments", &cs))
	require.Len(t, cs, 2)
	require.Equal(t, rid, cs[0].ReviewID)
	require.Equal(t, 3, *cs[0].Line)
	require.Nil(t, cs[1].Line)
	reply := s.AddReply("acme/widgets", 4, cs[0].ID, "alice", "done")
	require.Equal(t, 200, getJSON(t, s, "/repos/acme/widgets/pulls/4/comments", &cs))
	require.Len(t, cs, 3)
	require.Equal(t, reply, cs[2].ID)
	require.NotEqual(t, rid, cs[2].ReviewID, "a reply is its own review's")
	require.Equal(t, 200, getJSON(t, s, fmt.Sprintf("/repos/acme/widgets/pulls/4/reviews/%d/comments", rid), &cs))
	require.Len(t, cs, 2)

	s.SetCheckRun("acme/widgets", sha, "lint", "completed", "failure", githubtest.Step{Name: "Set up", Conclusion: "success"}, githubtest.Step{Name: "golangci-lint", Conclusion: "failure"})
	var runs struct {
		CheckRuns []struct {
			ID int64 `json:"id"`
		} `json:"check_runs"`
	}
	require.Equal(t, 200, getJSON(t, s, "/repos/acme/widgets/commits/"+sha+"/check-runs", &runs))
	var job struct {
		Steps []struct {
			Name       string  `json:"name"`
			Conclusion *string `json:"conclusion"`
		} `json:"steps"`
	}
	require.Equal(t, 200, getJSON(t, s, fmt.Sprintf("/repos/acme/widgets/actions/jobs/%d", runs.CheckRuns[0].ID), &job))
	require.Equal(t, "golangci-lint", job.Steps[1].Name)
	require.Equal(t, "failure", *job.Steps[1].Conclusion)
	s.Verify(t)
}

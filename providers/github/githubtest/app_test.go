package githubtest_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// call makes one request to the fake's api.github.com with an
// Authorization header.
func call(t *testing.T, s *githubtest.Server, method, path, auth string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "https://api.github.com"+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", auth)
	resp, err := s.HTTPClient().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

func TestAppJWTIsChecked(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	wrong, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	s := githubtest.New(t, githubtest.Options{})
	s.SetApp(7, "app", &key.PublicKey)
	now := s.Now()
	sign := func(k *rsa.PrivateKey, id string, at time.Time) string {
		jwt, _, err := github.SignAppJWT(k, id, at)
		require.NoError(t, err)
		return "Bearer " + jwt
	}
	for _, tc := range []struct {
		name string
		auth string
		want int
	}{
		{"valid", sign(key, "7", now), http.StatusOK},
		{"other key", sign(wrong, "7", now), http.StatusUnauthorized},
		{"other app", sign(key, "8", now), http.StatusUnauthorized},
		{"expired", sign(key, "7", now.Add(-10*time.Minute)), http.StatusUnauthorized},
		{"iat in the future", sign(key, "7", now.Add(5*time.Minute)), http.StatusUnauthorized},
		{"user token", "token " + s.Token(), http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _ := call(t, s, http.MethodGet, "/app", tc.auth)
			require.Equal(t, tc.want, status)
		})
	}
}

func TestInstallationTokenReachesOnlyItsRepositories(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	s := githubtest.New(t, githubtest.Options{})
	s.SetApp(7, "app", &key.PublicKey)
	s.AddRepo("acme/outside")
	inst := s.Install("acme", "acme/widgets")
	jwt, _, err := github.SignAppJWT(key, "7", s.Now())
	require.NoError(t, err)

	status, body := call(t, s, http.MethodPost, "/app/installations/"+strconv.FormatInt(inst, 10)+"/access_tokens", "Bearer "+jwt)
	require.Equal(t, http.StatusCreated, status)
	var tok struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	require.NoError(t, json.Unmarshal(body, &tok))
	require.Equal(t, s.Now().Add(time.Hour), tok.ExpiresAt)

	status, body = call(t, s, http.MethodGet, "/installation/repositories", "token "+tok.Token)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), `"full_name":"acme/widgets"`)
	status, _ = call(t, s, http.MethodGet, "/repos/acme/widgets/pulls", "token "+tok.Token)
	require.Equal(t, http.StatusOK, status)
	status, _ = call(t, s, http.MethodGet, "/repos/acme/outside/pulls", "token "+tok.Token)
	require.Equal(t, http.StatusNotFound, status, "outside the installation")
	status, _ = call(t, s, http.MethodGet, "/app/installations", "token "+tok.Token)
	require.Equal(t, http.StatusUnauthorized, status, "App routes need the JWT")

	s.Advance(time.Hour)
	status, _ = call(t, s, http.MethodGet, "/installation/repositories", "token "+tok.Token)
	require.Equal(t, http.StatusUnauthorized, status, "expired")
	s.Verify(t)
}

// TestAppDeliveriesPageByCursor: the App's delivery log is served as
// GitHub serves it: newest first, per_page (default 30, at most 100), and
// the next page named by an opaque cursor in Link rel="next", absent on
// the oldest page; a cursor the fake did not hand out is a 400.
func TestAppDeliveriesPageByCursor(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	s := githubtest.New(t, githubtest.Options{})
	s.SetApp(7, "app", &key.PublicKey)
	var ids []int64
	for range 230 {
		ids = append(ids, s.AddAppDelivery(githubtest.Delivery{Event: "pull_request"}))
	}
	jwt, _, err := github.SignAppJWT(key, "7", s.Now())
	require.NoError(t, err)
	get := func(path string) (int, []int64, string) {
		req, err := http.NewRequest(http.MethodGet, "https://api.github.com"+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+jwt)
		resp, err := s.HTTPClient().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var page []struct {
			ID int64 `json:"id"`
		}
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		}
		var got []int64
		for _, d := range page {
			got = append(got, d.ID)
		}
		return resp.StatusCode, got, resp.Header.Get("Link")
	}
	_, first, _ := get("/app/hook/deliveries")
	require.Len(t, first, 30, "GitHub's default page size")
	require.Equal(t, ids[229], first[0], "newest first")

	var all []int64
	path := "/app/hook/deliveries?per_page=500"
	for pages := 0; path != ""; pages++ {
		require.Less(t, pages, 3)
		status, page, link := get(path)
		require.Equal(t, http.StatusOK, status)
		require.LessOrEqual(t, len(page), 100)
		all = append(all, page...)
		path = ""
		if link != "" {
			require.Regexp(t, `^<https://api\.github\.com/app/hook/deliveries\?cursor=v1_\d+&per_page=500>; rel="next"$`, link)
			path = link[len("<https://api.github.com") : len(link)-len(`>; rel="next"`)]
		}
	}
	require.Len(t, all, 230)
	for i, id := range all {
		require.Equal(t, ids[229-i], id)
	}
	status, _, _ := get("/app/hook/deliveries?cursor=page2")
	require.Equal(t, http.StatusBadRequest, status)
}

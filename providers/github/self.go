package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
)

// Self is the GitHub identity a provider acts as (the authenticated gh
// user, or the token's owner), for the loop shield: an event that
// identity caused (its own push, comment, review, merge) is marked
// SelfCaused. The login comes from GET /user for the credential in use,
// asked once and cached; where that is refused (an App installation
// token answers 403) or fails, Fallback (config github.self_login) is used
// and GET /user is asked again after selfRetry. A nil *Self knows no
// identity. Safe for concurrent use.
type Self struct {
	// Fetch asks GET /user and returns the login.
	Fetch func(ctx context.Context) (string, error)
	// Fallback is the configured login (github.self_login), "" for none.
	Fallback string
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu       sync.Mutex
	login    string
	failedAt time.Time
}

// selfRetry is how long a failed GET /user is not asked again.
const selfRetry = 5 * time.Minute

// selfTimeout bounds one GET /user.
const selfTimeout = 10 * time.Second

// Login returns the identity's login, "" when unknown.
func (s *Self) Login(ctx context.Context) string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.login != "" {
		return s.login
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	if s.Fetch == nil || (!s.failedAt.IsZero() && now().Sub(s.failedAt) < selfRetry) {
		return s.Fallback
	}
	fctx, cancel := context.WithTimeout(ctx, selfTimeout)
	defer cancel()
	login, err := s.Fetch(fctx)
	if err != nil || login == "" {
		s.failedAt = now()
		return s.Fallback
	}
	s.login = login
	return login
}

// Mark sets SelfCaused on every event whose actor (the data's trust
// projection, docs/harness.md) is login, case-insensitively. An empty
// login marks nothing, and neither does the ghost account: a deleted
// user's events are never this node's own, whatever login it is set to.
func (s *Self) Mark(ctx context.Context, evs []sentinel.Event) {
	if s == nil || len(evs) == 0 {
		return
	}
	login := s.Login(ctx)
	if login == "" {
		return
	}
	for i := range evs {
		var d struct {
			Actor string `json:"actor"`
		}
		if json.Unmarshal(evs[i].Data, &d) == nil && d.Actor != "" && !IsGhost(d.Actor) && strings.EqualFold(d.Actor, login) {
			evs[i].SelfCaused = true
		}
	}
}

// userLogin decodes GET /user's login.
func userLogin(body []byte) (string, error) {
	var u struct {
		Login string `json:"login"`
	}
	if err := json.Unmarshal(body, &u); err != nil {
		return "", fmt.Errorf("GET /user: invalid JSON: %w", err)
	}
	return u.Login, nil
}

// ClientUser is a Self.Fetch over the in-process REST client.
func ClientUser(c *Client) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		resp, err := c.Get(ctx, "/user")
		if err != nil {
			return "", err
		}
		return userLogin(resp.Body)
	}
}

// APICaller makes one REST call (Runner.API).
type APICaller interface {
	API(ctx context.Context, method, path string, body []byte) (status int, header http.Header, respBody []byte, err error)
}

// RunnerUser is a Self.Fetch through gh (`gh api user`).
func RunnerUser(r APICaller) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		status, _, body, err := r.API(ctx, http.MethodGet, "user", nil)
		if err != nil {
			return "", err
		}
		if status != http.StatusOK {
			return "", fmt.Errorf("GET /user answered %d", status)
		}
		return userLogin(body)
	}
}

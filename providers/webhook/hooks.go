package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// ScopeFix is the command that grants the token the hook scope.
const ScopeFix = "gh auth refresh -s admin:repo_hook"

// hookBody is what POST and PATCH send (on stdin). Name is set on create
// only.
type hookBody struct {
	Name   string     `json:"name,omitempty"`
	Active bool       `json:"active"`
	Events []string   `json:"events"`
	Config hookConfig `json:"config"`
}

// hookConfig is the hook's delivery configuration.
type hookConfig struct {
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Secret      string `json:"secret,omitempty"`
	InsecureSSL string `json:"insecure_ssl"`
}

// hookState is what a GET of a hook tells us.
type hookState struct {
	ID     int64    `json:"id"`
	Active *bool    `json:"active"`
	Events []string `json:"events"`
	Config struct {
		URL string `json:"url"`
	} `json:"config"`
}

// hookURL is where GitHub posts deliveries of the hook with route key key.
func hookURL(origin, key string) string { return origin + "/inbound/sentinel-" + key }

func hooksPath(repo string) string { return "repos/" + repo + "/hooks" }

func hookPath(repo string, id int64) string {
	return hooksPath(repo) + "/" + strconv.FormatInt(id, 10)
}

// newHookBody builds the body for a hook pointing at origin with key and
// secret, subscribed to events.
func newHookBody(name, origin, key, secret string, events []string) ([]byte, error) {
	return json.Marshal(hookBody{
		Name:   name,
		Active: true,
		Events: events,
		Config: hookConfig{URL: hookURL(origin, key), ContentType: "json", Secret: secret, InsecureSSL: "0"},
	})
}

// createHook creates the repository hook, subscribed to events, and
// returns its id. A token that
// cannot manage the repository's hooks (401, 403, 404) gives a setup error
// naming the fix. When GitHub refuses because a hook with this URL already
// exists (422: our record was lost, the hook was not), that hook is adopted
// and given the new secret.
func (p *Provider) createHook(ctx context.Context, repo, origin, key, secret string, events []string) (int64, error) {
	body, err := newHookBody("web", origin, key, secret, events)
	if err != nil {
		return 0, fmt.Errorf("encode hook of %s: %w", repo, err)
	}
	status, _, resp, err := p.cfg.Runner.API(ctx, http.MethodPost, hooksPath(repo), body)
	if status == http.StatusUnprocessableEntity {
		if id, ok := p.adoptHook(ctx, repo, origin, key, secret, events); ok {
			return id, nil
		}
	}
	if err != nil {
		return 0, p.cannotManage(repo, err)
	}
	var h hookState
	if json.Unmarshal(resp, &h) != nil || h.ID <= 0 {
		return 0, fmt.Errorf("create hook on %s: GitHub's answer has no numeric hook id", repo)
	}
	return h.ID, nil
}

// adoptHook finds the repository's hook already posting to our URL and
// PATCHes the new secret into it.
func (p *Provider) adoptHook(ctx context.Context, repo, origin, key, secret string, events []string) (int64, bool) {
	_, _, resp, err := p.cfg.Runner.API(ctx, http.MethodGet, hooksPath(repo)+"?per_page=100", nil)
	if err != nil {
		return 0, false
	}
	var hooks []hookState
	if json.Unmarshal(resp, &hooks) != nil {
		return 0, false
	}
	want := hookURL(origin, key)
	for _, h := range hooks {
		if h.ID > 0 && h.Config.URL == want {
			rec := &hookRecord{Key: key, Repo: repo, HookID: h.ID, Secret: secret}
			if p.repointHook(ctx, rec, origin, events) != nil {
				return 0, false
			}
			p.cfg.Log.Info("webhook adopted an existing hook with our URL", "repo", repo, "hookId", h.ID)
			return h.ID, true
		}
	}
	return 0, false
}

// repointHook PATCHes the hook's URL and events (and re-activates it),
// keeping its secret.
func (p *Provider) repointHook(ctx context.Context, rec *hookRecord, origin string, events []string) error {
	body, err := newHookBody("", origin, rec.Key, rec.Secret, events)
	if err != nil {
		return fmt.Errorf("encode hook of %s: %w", rec.Repo, err)
	}
	if _, _, _, err := p.cfg.Runner.API(ctx, http.MethodPatch, hookPath(rec.Repo, rec.HookID), body); err != nil {
		return fmt.Errorf("re-point hook %d of %s: %w", rec.HookID, rec.Repo, err)
	}
	return nil
}

// getHook reads the hook. A hook that is gone is an error matching
// isNotFound.
func (p *Provider) getHook(ctx context.Context, repo string, id int64) (hookState, error) {
	_, _, resp, err := p.cfg.Runner.API(ctx, http.MethodGet, hookPath(repo, id), nil)
	if err != nil {
		return hookState{}, fmt.Errorf("get hook %d of %s: %w", id, repo, err)
	}
	var h hookState
	if err := json.Unmarshal(resp, &h); err != nil {
		return hookState{}, fmt.Errorf("get hook %d of %s: bad answer: %w", id, repo, err)
	}
	return h, nil
}

// deleteHook deletes the hook; one already gone counts as deleted.
func (p *Provider) deleteHook(ctx context.Context, repo string, id int64) error {
	_, _, _, err := p.cfg.Runner.API(ctx, http.MethodDelete, hookPath(repo, id), nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("delete hook %d of %s: %w", id, repo, err)
	}
	return nil
}

// isNotFound reports a definite 404 from GitHub.
func isNotFound(err error) bool { return providers.ReasonOf(err) == providers.ReasonNotFound }

// cannotManage turns a gh failure into a setup error naming the fix when
// GitHub refused (401, 403, 404: the token lacks the scope or admin rights,
// or cannot see the repository). err's text never carries the secret.
func (p *Provider) cannotManage(repo string, err error) error {
	who, fix := "gh", "run "+ScopeFix
	if src := p.cfg.source(); src != github.SourceGH {
		who, fix = "the token in "+src, p.cfg.scopeFix()
	}
	switch providers.ReasonOf(err) {
	case providers.ReasonAuth, providers.ReasonForbidden, providers.ReasonNotFound:
		e := providers.SetupError("%s cannot manage the hooks of %s (%v): the token needs the admin:repo_hook scope and admin rights on the repository: %s", who, repo, err, fix)
		e.Err = err
		return e
	}
	if errors.Is(err, github.ErrGHNotInstalled) {
		return err
	}
	return fmt.Errorf("hook of %s: %w", repo, err)
}

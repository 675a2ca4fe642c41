package gitlab

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// Slug is the adapter's slug (the executable is sentinel-adapter-gitlab).
const Slug = "gitlab"

// Version is the adapter's version.
const Version = "0.1.0"

// Config configures the adapter.
type Config struct {
	// HTTP is the client of the GitLab API (default: a client with a 30 s
	// timeout and the system's CAs; SSL_CERT_FILE adds others).
	HTTP *http.Client
	// Getenv reads GITLAB_TOKEN (default os.Getenv).
	Getenv func(string) string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// New returns the adapter, ready for kit.Serve.
func New(cfg Config) kit.Adapter {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &gl{cfg: cfg}
	return kit.Adapter{
		Describe: kit.Description{
			Slug: Slug, Name: "GitLab merge requests", Version: Version,
			Description:  "Polls GitLab (gitlab.com or self-managed, REST API v4) for merge request state, pipelines, notes and approvals, with conditional requests.",
			Capabilities: providers.Capabilities{Subjects: []string{Scheme}, Poll: true, Durable: true, RequiresAuth: true, TypicalLatencyMs: 15000},
			DefaultTypes: []kit.DefaultTypesRule{
				{Match: "gitlab:*!*", Types: []string{"gitlab.merge_request.*", "gitlab.pipeline.completed", "gitlab.note.created", "gitlab.approval.*"}},
				{Match: "gitlab:*", Types: []string{"gitlab.merge_request.*"}},
			},
			SetupFields: []providers.SetupField{
				{Name: "token", Description: "a GitLab access token with the read_api scope (else GITLAB_TOKEN)", Sensitive: true},
				{Name: "baseUrl", Description: "the GitLab instance, https only (default https://gitlab.com)", Endpoint: true},
			},
		},
		Readiness: a.readiness,
		Setup:     a.setup,
		Create:    a.create,
		Poll:      a.poll,
		Status:    a.status,
	}
}

// gl is the adapter's behaviour (it keeps nothing between calls: every
// poll's state is in its cursor).
type gl struct{ cfg Config }

// token returns the token and where it came from.
func (a *gl) token(c kit.Credentials) (string, string) {
	if t := c["token"]; t != "" {
		return t, "setup"
	}
	if t := a.cfg.Getenv("GITLAB_TOKEN"); t != "" {
		return t, "GITLAB_TOKEN"
	}
	return "", ""
}

func (a *gl) client(c kit.Credentials) (*client, error) {
	tok, _ := a.token(c)
	return newClient(c["baseUrl"], tok, a.cfg.HTTP)
}

func (a *gl) readiness(_ context.Context, p kit.ReadinessParams) (kit.Readiness, error) {
	_, src := a.token(p.Credentials)
	if _, err := a.client(p.Credentials); err != nil {
		return kit.Readiness{Reason: err.Error()}, nil
	}
	return kit.Readiness{Ready: true, CredentialSource: src}, nil
}

// setup checks the fields against GitLab: GET /user with the token.
func (a *gl) setup(ctx context.Context, p kit.SetupParams) (kit.SetupResult, error) {
	c, err := a.client(p.Fields)
	if err != nil {
		return kit.SetupResult{}, err
	}
	var u user
	if _, _, err := c.get(ctx, "/user", "", &u); err != nil {
		return kit.SetupResult{}, err
	}
	_, src := a.token(p.Fields)
	return kit.SetupResult{Readiness: kit.Readiness{Ready: true, CredentialSource: src}}, nil
}

func (a *gl) create(ctx context.Context, p kit.CreateParams) (kit.Handle, error) {
	if len(p.Match) != 1 {
		return kit.Handle{}, kit.Errorf(kit.ReasonInvalid, "gitlab watches one subject per sentinel (give one clause)")
	}
	ref, err := ParseSubject(p.Match[0].Subject)
	if err != nil {
		return kit.Handle{}, kit.Errorf(kit.ReasonInvalid, "%v", err)
	}
	if _, err := a.client(p.Credentials); err != nil {
		return kit.Handle{}, err
	}
	return kit.Handle{RemoteID: ref.Subject(), Cursor: cursor{V: cursorVersion}.encode()}, nil
}

func (a *gl) poll(ctx context.Context, p kit.PollParams) (kit.PollResult, error) {
	ref, err := ParseSubject(p.Handle.RemoteID)
	if err != nil {
		return kit.PollResult{}, kit.Errorf(kit.ReasonInvalid, "the handle names no gitlab subject (re-create the sentinel)")
	}
	c, err := a.client(p.Credentials)
	if err != nil {
		return kit.PollResult{}, err
	}
	cur, err := parseCursor(p.Handle.Cursor)
	if err != nil {
		return kit.PollResult{}, err
	}
	pl := &poller{c: c, ref: ref, cur: cur, limit: max(p.Limit, 1), now: a.cfg.Now()}
	if ref.IID > 0 {
		err = pl.pollMR(ctx)
	} else {
		err = pl.pollProject(ctx)
	}
	if err != nil {
		return kit.PollResult{}, err
	}
	pl.cur.Base = true
	return kit.PollResult{Events: pl.events, Cursor: pl.cur.encode()}, nil
}

func (a *gl) status(_ context.Context, p kit.HandleParams) (kit.Health, error) {
	cur, err := parseCursor(p.Handle.Cursor)
	if err != nil {
		return kit.Health{Detail: err.Error()}, nil
	}
	h := kit.Health{OK: true, Detail: "watching " + p.Handle.RemoteID}
	if !cur.Base {
		h.Detail += " (baseline not taken yet)"
	}
	return h, nil
}

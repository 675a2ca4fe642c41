package github

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentproto/sentinel/providers"
)

// Credential sources, as readiness and `sentinel adapters` name them
// (info.credentialSource).
const (
	SourceGH          = "gh"
	SourceGHToken     = "GH_TOKEN"
	SourceGitHubToken = "GITHUB_TOKEN"
	// The Enterprise variables gh reads for a host other than github.com.
	SourceGHEnterpriseToken     = "GH_ENTERPRISE_TOKEN"
	SourceGitHubEnterpriseToken = "GITHUB_ENTERPRISE_TOKEN"
)

// DefaultAPIURL is the default of the github.api_url key.
const DefaultAPIURL = "https://api.github.com"

// Credentials are the GitHub access the GitHub providers share: where the
// token comes from, the host and the REST root. With a token from the
// environment (GH_TOKEN, else GITHUB_TOKEN: gh's own order) every call is
// made in-process and gh is never run, which is what a container without
// gh needs; otherwise the token comes from the host's gh (`gh auth token`)
// and hook management goes through `gh api`.
type Credentials struct {
	// Source is SourceGHToken, SourceGitHubToken or SourceGH.
	Source string
	// Host is the GitHub host (github.com, or an Enterprise host).
	Host string
	// APIBase is the REST root, without a trailing slash.
	APIBase string
	// Token supplies the token; it is never logged.
	Token TokenSource

	runner *Runner
}

// ResolveCredentials picks the credentials from the runner's environment
// (the process environment by default): a non-empty GH_TOKEN, else
// GITHUB_TOKEN, else gh; for a GitHub Enterprise host GH_ENTERPRISE_TOKEN
// and GITHUB_ENTERPRISE_TOKEN come first, as in gh. apiURL is github.api_url ("" means
// DefaultAPIURL); left at the default, GH_HOST names an Enterprise host
// whose REST root is https://<host>/api/v3, as gh does. An apiURL that is
// not an http(s) URL with a host and without credentials, query or
// fragment is refused.
func ResolveCredentials(r *Runner, apiURL string) (*Credentials, error) {
	if r == nil {
		r = NewRunner(Config{})
	}
	host, base, err := resolveAPI(r.Host(), apiURL)
	if err != nil {
		return nil, err
	}
	c := &Credentials{Host: host, APIBase: base, runner: r}
	vars := []string{SourceGHToken, SourceGitHubToken}
	if enterprise(host) {
		// gh's order for an Enterprise host; GH_TOKEN and GITHUB_TOKEN
		// still serve one that has no Enterprise variable set.
		vars = append([]string{SourceGHEnterpriseToken, SourceGitHubEnterpriseToken}, vars...)
	}
	for _, v := range vars {
		if tok := strings.TrimSpace(r.Getenv(v)); tok != "" {
			c.Source, c.Token = v, &EnvToken{Var: v, token: tok}
			return c, nil
		}
	}
	c.Source, c.Token = SourceGH, NewAuth(r, host)
	return c, nil
}

// enterprise reports whether host is a GitHub Enterprise Server host (not
// github.com, its API host, or a GHE.com tenant), for which gh reads
// GH_ENTERPRISE_TOKEN and GITHUB_ENTERPRISE_TOKEN.
func enterprise(host string) bool {
	h := strings.ToLower(host)
	return h != "" && h != DefaultHost && h != "api.github.com" && !strings.HasSuffix(h, ".ghe.com")
}

// GHCredentials are the gh-backed credentials of r's host (GH_HOST, else
// github.com), whatever the environment holds: the providers' default
// when they are not given Credentials.
func GHCredentials(r *Runner) *Credentials {
	host := r.Host()
	return &Credentials{Source: SourceGH, Host: host, APIBase: APIBase(host), Token: NewAuth(r, host), runner: r}
}

// InProcess reports whether calls are made in-process with a token from
// the environment (true) or through gh (false).
func (c *Credentials) InProcess() bool { return c.Source != SourceGH }

// Readiness reports whether the credentials can be used, offline: a token
// from the environment is ready as soon as it is set (GitHub judges it at
// the first call); gh must be installed and authenticated (Readiness).
// CredentialSource names the source either way.
func (c *Credentials) Readiness(ctx context.Context) providers.Readiness {
	if c.InProcess() {
		return providers.Readiness{Ready: true, CredentialSource: c.Source}
	}
	r := Readiness(ctx, c.runner, c.Host)
	r.CredentialSource = SourceGH
	return r
}

// Hint is the fix to name when GitHub rejects the token.
func (c *Credentials) Hint() string { return tokenHint(c.Source) }

func tokenHint(source string) string {
	if source == "" || source == SourceGH {
		return LoginHint
	}
	return "check " + source + " (a valid, unexpired token with access to the repository), or unset it to use gh"
}

// resolveAPI derives the host and REST root from GH_HOST and api_url.
func resolveAPI(ghHost, apiURL string) (host, base string, err error) {
	apiURL = strings.TrimRight(strings.TrimSpace(apiURL), "/")
	if apiURL == "" || apiURL == DefaultAPIURL {
		if ghHost == "" {
			ghHost = DefaultHost
		}
		return ghHost, APIBase(ghHost), nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return "", "", fmt.Errorf("github.api_url %q must be an http(s) URL such as https://github.example.com/api/v3", apiURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("github.api_url (%s://%s) must carry no credentials, query or fragment: the token comes from GH_TOKEN, GITHUB_TOKEN or gh", u.Scheme, u.Host)
	}
	host = strings.ToLower(u.Hostname())
	if host == "api.github.com" {
		host = DefaultHost
	}
	return host, apiURL, nil
}

// EnvToken is a token taken from an environment variable (GH_TOKEN or
// GITHUB_TOKEN) at start. It is held in memory only; fmt prints the
// variable's name, never the token.
type EnvToken struct {
	// Var is the variable the token came from.
	Var   string
	token string
}

// NewEnvToken returns the token source of a token read from variable name.
func NewEnvToken(name, token string) *EnvToken { return &EnvToken{Var: name, token: token} }

// Token implements TokenSource.
func (e *EnvToken) Token(context.Context) (string, error) {
	if e.token == "" {
		return "", &providers.Error{Reason: providers.ReasonAuth, Message: e.Var + " is empty: " + tokenHint(e.Var)}
	}
	return e.token, nil
}

// Invalidate implements TokenSource; an environment token cannot be
// re-read.
func (e *EnvToken) Invalidate() {}

// Source names where the token comes from.
func (e *EnvToken) Source() string { return e.Var }

// String implements fmt.Stringer without the token.
func (e *EnvToken) String() string { return e.Var + "=" + Redacted }

// GoString implements fmt.GoStringer without the token.
func (e *EnvToken) GoString() string { return e.String() }

// Source names where the token comes from (SourceGH).
func (a *Auth) Source() string { return SourceGH }

// sourceOf names a token source (SourceGH when it does not say).
func sourceOf(ts TokenSource) string {
	if s, ok := ts.(interface{ Source() string }); ok {
		return s.Source()
	}
	return SourceGH
}

package api

import (
	"context"
	"time"

	"github.com/agentproto/sentinel"
)

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated principal.
func WithPrincipal(ctx context.Context, p sentinel.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries. A ctx that carries
// none (a request no authentication passed) is the zero principal: it may
// do nothing.
func PrincipalFrom(ctx context.Context) sentinel.Principal {
	p, _ := ctx.Value(principalKey{}).(sentinel.Principal)
	return p
}

// Authenticator resolves a bearer token into its principal (ok false for
// a token that names none, revoked ones included). It is asked on every
// request, so it answers from memory and must not block for long.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (sentinel.Principal, bool)
}

// TokenRequest is the body of POST /tokens.
type TokenRequest struct {
	Name     string         `json:"name"`
	Scope    sentinel.Scope `json:"scope"`
	Sessions string         `json:"sessions,omitempty"`
}

// TokenView is a named token as GET /tokens shows it: never its secret,
// nor the hash the node keeps of it.
type TokenView struct {
	Name      string         `json:"name"`
	Scope     sentinel.Scope `json:"scope"`
	Sessions  string         `json:"sessions,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	CreatedBy string         `json:"createdBy,omitempty"`
}

// TokenCreated is the answer of POST /tokens: the token, shown this once.
type TokenCreated struct {
	Token string    `json:"token"`
	View  TokenView `json:"principal"`
}

// Tokens manages named tokens (admin only). Errors: invalid_input (a bad
// name, scope or prefix), token_exists, token_not_found,
// forbidden_scope.
type Tokens interface {
	Create(ctx context.Context, req TokenRequest) (TokenCreated, error)
	List(ctx context.Context) ([]TokenView, error)
	Revoke(ctx context.Context, name string) error
}

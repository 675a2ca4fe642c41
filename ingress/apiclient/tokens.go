package apiclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/agentproto/sentinel/ingress/api"
)

// Tokens implements api.Tokens over the node's REST API (POST /tokens,
// GET /tokens, DELETE /tokens/{name}; admin tokens only). Errors are
// *sentinel.Error values carrying the node's catalogue code (AsDomain).
type Tokens struct {
	C *Client
}

var _ api.Tokens = Tokens{}

// Create creates a named token; the answer carries it, this once. A POST:
// an answer lost on the way is not repeated on another node.
func (t Tokens) Create(ctx context.Context, req api.TokenRequest) (api.TokenCreated, error) {
	var out api.TokenCreated
	err := t.C.Do(ctx, http.MethodPost, "/tokens", req, &out)
	return out, AsDomain(err)
}

// List lists the named tokens (never a secret).
func (t Tokens) List(ctx context.Context) ([]api.TokenView, error) {
	var out struct {
		Tokens []api.TokenView `json:"tokens"`
	}
	err := t.C.Do(ctx, http.MethodGet, "/tokens", nil, &out)
	return out.Tokens, AsDomain(err)
}

// Revoke revokes a named token.
func (t Tokens) Revoke(ctx context.Context, name string) error {
	return AsDomain(t.C.Do(ctx, http.MethodDelete, "/tokens/"+url.PathEscape(name), nil, nil))
}

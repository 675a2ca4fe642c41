package app

import (
	"context"
	"net/http"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
	"github.com/agentproto/sentinel/runtime/principals"
)

// openPrincipals opens the named tokens (runtime/principals: the bucket
// and its mirror) and records their teardown.
func (a *App) openPrincipals(ctx context.Context) error {
	store, err := principals.Open(ctx, a.Bus, principals.WithLogger(a.Log.With("component", "principals")), principals.WithClock(a.now))
	if err != nil {
		return err
	}
	a.principals = store
	a.push("named tokens", func(context.Context) error { store.Stop(); return nil })
	return nil
}

// tokensAPI is api.Tokens over the named tokens, for admin principals.
type tokensAPI struct{ store *principals.Store }

var _ api.Tokens = tokensAPI{}

// viewOf is a record as GET /tokens shows it.
func viewOf(r principals.Record) api.TokenView {
	return api.TokenView{Name: r.Name, Scope: r.Scope, Sessions: r.Sessions, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy}
}

func (t tokensAPI) Create(ctx context.Context, req api.TokenRequest) (api.TokenCreated, error) {
	p := api.PrincipalFrom(ctx)
	if err := p.NeedAdmin("create tokens"); err != nil {
		return api.TokenCreated{}, err
	}
	tok, rec, err := t.store.Create(ctx, req.Name, req.Scope, req.Sessions, p.Name)
	if err != nil {
		return api.TokenCreated{}, err
	}
	return api.TokenCreated{Token: tok, View: viewOf(rec)}, nil
}

func (t tokensAPI) List(ctx context.Context) ([]api.TokenView, error) {
	if err := api.PrincipalFrom(ctx).NeedAdmin("list tokens"); err != nil {
		return nil, err
	}
	recs := t.store.List(ctx)
	out := make([]api.TokenView, 0, len(recs))
	for _, r := range recs {
		out = append(out, viewOf(r))
	}
	return out, nil
}

func (t tokensAPI) Revoke(ctx context.Context, name string) error {
	if err := api.PrincipalFrom(ctx).NeedAdmin("revoke tokens"); err != nil {
		return err
	}
	return t.store.Revoke(ctx, name)
}

// readers lets through the principals that may read the node's state as
// a whole (admin, read), refusing others with forbidden_scope (the
// metrics of the node: counts of every session's work).
func readers(what string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := api.PrincipalFrom(r.Context()); !p.Admin() && p.Scope != sentinel.ScopeRead {
			httpapi.WriteError(w, p.Refuse(what))
			return
		}
		next.ServeHTTP(w, r)
	})
}

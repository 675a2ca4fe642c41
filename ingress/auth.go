package ingress

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// BearerAuth refuses requests whose Authorization header is not "Bearer
// <token>" of a principal with 401 unauthorized, and puts the principal
// in the request's context (api.PrincipalFrom): the node's own token
// (constant-time comparison) is the operator (sentinel.Operator); any other
// is asked of named, when set (named tokens, runtime/principals).
func BearerAuth(token string, named api.Authenticator) func(http.Handler) http.Handler {
	want := []byte(token)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			got = strings.TrimSpace(got)
			var p sentinel.Principal
			switch {
			case !ok || got == "":
			case len(want) > 0 && subtle.ConstantTimeCompare([]byte(got), want) == 1:
				p, ok = sentinel.Operator(), true
			case named != nil:
				p, ok = named.Authenticate(r.Context(), got)
			default:
				ok = false
			}
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sentinel"`)
				httpapi.WriteError(w, sentinel.Errorf(sentinel.CodeUnauthorized, "missing or wrong bearer token (see <home>/daemon-token or AGENTPROTO_TOKEN)"))
				return
			}
			next.ServeHTTP(w, r.WithContext(api.WithPrincipal(r.Context(), p)))
		})
	}
}

// ReadOnly refuses a state-changing request (any method but GET and
// HEAD) of a principal that may change nothing (scope read) with 403
// forbidden_scope, before its handler runs. It sits behind BearerAuth.
func ReadOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if p := api.PrincipalFrom(r.Context()); !p.Writes() {
				httpapi.WriteError(w, p.Refuse(r.Method+" "+r.URL.Path))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

package ingress

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// BearerAuth refuses requests whose Authorization header is not
// "Bearer <token>" (constant-time comparison) with 401 unauthorized.
func BearerAuth(token string) func(http.Handler) http.Handler {
	want := []byte(token)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || len(want) == 0 || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sentinel"`)
				httpapi.WriteError(w, sentinel.Errorf(sentinel.CodeUnauthorized, "missing or wrong bearer token (see <home>/daemon-token or AGENTPROTO_TOKEN)"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

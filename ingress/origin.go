package ingress

import (
	"net/http"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// OriginCheck refuses state-changing requests (every method but GET, HEAD
// and OPTIONS) sent by a browser page of another origin, with 403
// forbidden_origin: Sec-Fetch-Site must be same-origin or none when sent,
// else an Origin header must name the request's own Host
// (net/http.CrossOriginProtection). A request with neither header (curl,
// the CLI, GitHub, agentpush) passes; so does curl -d's form content type,
// since a bearer header already forces a CORS preflight the node never
// grants. This is what stops a page on this machine from posting to
// /inbound (a CORS-simple request) or, later, riding a dashboard cookie.
func OriginCheck() func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := cop.Check(r); err != nil {
				refuse(w, sentinel.Errorf(api.CodeForbiddenOrigin, "cross-origin %s refused: %s", r.Method, err.Error()))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

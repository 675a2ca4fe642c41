package ingress

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// DefaultBodyReadTimeout bounds how long a request body may take to
// arrive when Config.BodyReadTimeout is unset.
const DefaultBodyReadTimeout = 30 * time.Second

// BodyDeadline bounds how long a request body may take to arrive (a
// 1 byte/s body no longer holds a connection): for a request that carries
// a body, the connection's read deadline is set to now+d, and cleared again
// as soon as the body has been read to its end, so a response that then
// streams for long (MCP over POST) is not cut (net/http of Go 1.26 also
// clears it when it starts its background read at the body's end; this
// does not rely on that). A request without a body (SSE streams, ?wait=
// long-polls, MCP GET streams) gets no deadline at all: net/http's
// background read is already running under such a handler, and a deadline
// passing under it cancels the request's context.
// A read past the deadline fails with an error matching
// os.ErrDeadlineExceeded; handlers answer 408 body_timeout.
func BodyDeadline(d time.Duration) func(http.Handler) http.Handler {
	if d <= 0 {
		d = DefaultBodyReadTimeout
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(d)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody clears the connection's read deadline once the body has
// been read to io.EOF.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	cleared bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.cleared {
		b.cleared = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

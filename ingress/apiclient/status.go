package apiclient

import (
	"context"
	"net/http"
)

// statusRecorder records the status of the last response it carried.
type statusRecorder struct {
	next   http.RoundTripper
	status int
}

func (s *statusRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if resp != nil {
		s.status = resp.StatusCode
	}
	return resp, err
}

// DoStatus is Do that also returns the HTTP status of the answer (0 when
// none came back), for routes whose status carries meaning (POST /follows:
// 201 created, 200 updated; POST /sessions likewise).
func (c *Client) DoStatus(ctx context.Context, method, path string, body, out any) (int, error) {
	hc := http.DefaultClient
	if c.HTTP != nil {
		hc = c.HTTP
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	rec := &statusRecorder{next: next}
	cp := *hc
	cp.Transport = rec
	cc := *c
	cc.HTTP = &cp
	err := cc.Do(ctx, method, path, body, out)
	return rec.status, err
}

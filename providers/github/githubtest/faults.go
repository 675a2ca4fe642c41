package githubtest

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault is an injected failure: requests whose method matches (any when
// "") and whose path starts with Path (any when "") get Status, Header and
// Body instead of the real answer, Times times (0 means until cleared).
// Faulted requests are logged, never counted as unexpected.
type Fault struct {
	Method string
	Path   string
	Status int
	Header http.Header
	Body   string
	Times  int

	hits int
}

// Inject adds a fault; the first matching fault wins.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Body == "" {
		f.Body = `{"message":"` + http.StatusText(f.Status) + `"}`
	}
	s.faults = append(s.faults, &f)
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() { s.mu.Lock(); s.faults = nil; s.mu.Unlock() }

// ServerErrors makes the next times requests under path answer 502
// (0 means until cleared): a 5xx storm.
func (s *Server) ServerErrors(path string, times int) {
	s.Inject(Fault{Path: path, Status: http.StatusBadGateway, Times: times, Body: `{"message":"Server Error"}`})
}

// SecondaryRateLimit makes requests under path answer GitHub's secondary
// rate limit: 403 with Retry-After.
func (s *Server) SecondaryRateLimit(path string, retryAfter time.Duration, times int) {
	s.Inject(Fault{Path: path, Status: http.StatusForbidden, Times: times,
		Header: http.Header{"Retry-After": {strconv.Itoa(int(retryAfter / time.Second))}},
		Body:   `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`})
}

// TooManyRequests makes requests under path answer 429 with Retry-After.
func (s *Server) TooManyRequests(path string, retryAfter time.Duration, times int) {
	s.Inject(Fault{Path: path, Status: http.StatusTooManyRequests, Times: times,
		Header: http.Header{"Retry-After": {strconv.Itoa(int(retryAfter / time.Second))}}})
}

// BadCredentials makes the next times requests (any path) answer 401 Bad
// credentials, as for a revoked token.
func (s *Server) BadCredentials(times int) {
	s.Inject(Fault{Status: http.StatusUnauthorized, Times: times, Body: `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`})
}

// matchFault returns the first live matching fault and counts the hit
// (mu must be held).
func (s *Server) matchFault(method, path string) *Fault {
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && strings.HasPrefix(path, f.Path) {
			f.hits++
			if f.Times > 0 && f.hits >= f.Times {
				s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

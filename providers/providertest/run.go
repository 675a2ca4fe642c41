package providertest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// RunPoller runs the suite as subtests of t.
func RunPoller(t *testing.T, h Harness) {
	t.Helper()
	h = defaults(h)
	s := &state{h: h}
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) { c.run(t, s) })
	}
}

// Result is one check of a Check run.
type Result struct {
	Name string `json:"name"`
	// Outcome is pass, fail or skip.
	Outcome string `json:"outcome"`
	// Detail says what failed, or why the check was skipped.
	Detail string `json:"detail,omitempty"`
	// Ms is how long the check took.
	Ms int64 `json:"ms"`
}

// Outcomes of a Result.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Check runs the suite outside `go test` and returns one result per check,
// in order; a check whose prerequisite failed is skipped.
func Check(h Harness) []Result {
	h = defaults(h)
	s := &state{h: h}
	var out []Result
	for _, c := range checks() {
		out = append(out, runOne(c, s))
	}
	return out
}

// Failed reports whether any result failed.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Outcome == Fail {
			return true
		}
	}
	return false
}

func defaults(h Harness) Harness {
	if h.Until.Kind == "" {
		h.Until.Kind = "never"
	}
	return h
}

// runOne runs a check in its own goroutine (FailNow and Skipf end it as
// they end a test) and records its outcome.
func runOne(c check, s *state) Result {
	r := &recorder{}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			if v := recover(); v != nil {
				r.Errorf("panic: %v", v)
			}
		}()
		c.run(r, s)
	}()
	wg.Wait()
	res := Result{Name: c.name, Outcome: Pass, Ms: time.Since(start).Milliseconds()}
	switch {
	case len(r.errs) > 0:
		res.Outcome, res.Detail = Fail, strings.Join(r.errs, "; ")
	case r.skip != "":
		res.Outcome, res.Detail = Skip, r.skip
	}
	return res
}

// recorder is the T of Check.
type recorder struct {
	mu   sync.Mutex
	errs []string
	skip string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, oneLine(fmt.Sprintf(format, args...)))
}

func (r *recorder) FailNow() { runtime.Goexit() }

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skip = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// oneLine folds testify's multi-line failure text into one line.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Error Trace:") {
			continue
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}

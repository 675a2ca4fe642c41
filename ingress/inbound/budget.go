package inbound

import (
	"errors"
	"io"
	"sync"
)

// DefaultMaxInFlight caps the push-ingress body bytes held at once across
// all requests when Handler.MaxInFlight is unset.
const DefaultMaxInFlight = 64 << 20

// errBusy is returned when the in-flight budget has no room for a body.
var errBusy = errors.New("push ingress is holding too many body bytes")

// budget counts the body bytes push ingress holds at once, so parallel
// large posts cannot grow the node's memory without bound. It is safe for
// concurrent use.
type budget struct {
	mu   sync.Mutex
	used int64
	max  int64
}

// take reserves n bytes; it reports false (reserving nothing) when they
// do not fit.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < 0 || b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

// takeUpTo reserves as many of n bytes as fit and returns how many.
func (b *budget) takeUpTo(n int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = max(0, min(n, b.max-b.used))
	b.used += n
	return n
}

// give returns n reserved bytes.
func (b *budget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}

// inUse returns the bytes reserved now.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// chunk is the most a budgetReader reserves ahead of one read.
const chunk = 32 << 10

// budgetReader reserves budget for a body of unknown length as it arrives
// (at most chunk bytes ahead of a read, and no more than is free); a read
// with no room left fails with errBusy. held is what it reserved: the
// caller gives it back once the body is dropped.
type budgetReader struct {
	r    io.Reader
	b    *budget
	held int64
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	got := br.b.takeUpTo(int64(min(len(p), chunk)))
	if got == 0 {
		// No room: a one-byte probe tells the end of the body (a body that
		// fills the budget exactly) from more of it.
		n, err := br.r.Read(p[:1])
		if n == 0 {
			return 0, err
		}
		return 0, errBusy
	}
	n, err := br.r.Read(p[:got])
	br.b.give(got - int64(n))
	br.held += int64(n)
	return n, err
}

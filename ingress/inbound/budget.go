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
// large posts cannot grow the node's memory without bound. Bytes count
// as they arrive (budgetReader), not as a request declares them. It is safe for
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

// chunk is the most a budgetReader reads at once: the bytes of one read
// are held before they are counted, so it bounds what a request holds
// uncounted.
const chunk = 32 << 10

// budgetReader counts a body against the budget as it arrives, whatever
// length it declares: a read's bytes are reserved once they are read (at
// most chunk at a time), and a read whose bytes do not fit fails with
// errBusy. held is what it reserved: the caller gives it back once the
// body is dropped. A sender that declares 25 MiB and trickles a byte holds
// a byte.
type budgetReader struct {
	r    io.Reader
	b    *budget
	held int64
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if len(p) > chunk {
		p = p[:chunk]
	}
	n, err := br.r.Read(p)
	if n > 0 {
		if !br.b.take(int64(n)) {
			return 0, errBusy
		}
		br.held += int64(n)
	}
	return n, err
}

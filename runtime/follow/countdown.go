package follow

import "sync"

// countdown tells done once every party it counts has released: ok only
// if all of them were ok. It starts with one party (the caller's own,
// released last), so a batch that flushes before the caller finished
// adding cannot end it early.
type countdown struct {
	mu   sync.Mutex
	left int
	ok   bool
	done func(ok bool)
}

func newCountdown(done func(ok bool)) *countdown {
	return &countdown{left: 1, ok: true, done: done}
}

// add counts one more party.
func (c *countdown) add() {
	c.mu.Lock()
	c.left++
	c.mu.Unlock()
}

// release is one party's end.
func (c *countdown) release(ok bool) {
	c.mu.Lock()
	c.left--
	c.ok = c.ok && ok
	fire := c.left == 0 && c.done != nil
	res := c.ok
	c.mu.Unlock()
	if fire {
		c.done(res)
	}
}

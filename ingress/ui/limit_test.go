package ui

import (
	"fmt"
	"testing"
	"time"
)

// TestLoginLimiterWindowAndOverflow: an address is blocked after
// maxFailures within the window and free again after it; once the table
// is full, new addresses share one bucket instead of growing it, and a
// success resets only its own address.
func TestLoginLimiterWindowAndOverflow(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	l := newLoginLimiter(func() time.Time { return now })
	for i := 0; i < maxFailures; i++ {
		if b, _ := l.blocked("a"); b {
			t.Fatalf("blocked after %d failures", i)
		}
		l.fail("a")
	}
	b, wait := l.blocked("a")
	if !b || wait != failureWindow {
		t.Fatalf("after %d failures: blocked %v for %s, want true for %s", maxFailures, b, wait, failureWindow)
	}
	if b, _ := l.blocked("b"); b {
		t.Fatal("another address is not blocked")
	}
	now = now.Add(failureWindow)
	if b, _ := l.blocked("a"); b {
		t.Fatal("still blocked once the window is over")
	}

	for i := 0; len(l.m) < maxClients; i++ {
		l.fail(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
	}
	for i := 0; i < maxFailures; i++ {
		l.fail(fmt.Sprintf("192.168.0.%d", i))
	}
	if len(l.m) > maxClients {
		t.Fatalf("the table grew to %d past %d", len(l.m), maxClients)
	}
	if b, _ := l.blocked("192.168.1.1"); !b {
		t.Fatal("with the table full, a new address shares the overflow bucket's failures")
	}
	l.reset("10.0.0.1")
	if _, ok := l.m["10.0.0.1"]; ok {
		t.Fatal("reset forgets the address")
	}
}

package bus

// LocalLocks returns how many names the locker keeps an in-process lock
// for (tests check that the map does not grow with every name ever used).
func (l *Locker) LocalLocks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.local)
}

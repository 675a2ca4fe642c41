package sentinels

// MirrorSizes returns how many records and known revisions the store's
// mirror holds (tests check that deleted ids do not stay forever).
func (s *Store) MirrorSizes() (recs, known int) {
	c := s.mirror()
	if c == nil {
		return 0, 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.recs), len(c.known)
}

package sentinels

// MirrorSizes returns how many records, known revisions and remembered
// deletes the store's mirror holds (tests check that deleted ids do not
// stay forever).
func (s *Store) MirrorSizes() (recs, known, gone int) {
	c := s.mirror()
	if c == nil {
		return 0, 0, 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.recs), len(c.known), len(c.gone)
}

// GoneCap is goneCap, for tests.
const GoneCap = goneCap

package webhook

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentproto/sentinel"
)

// memKV is an in-memory providers.KV for unit and fuzz tests that need no
// JetStream (the lifecycle tests use the real bucket).
type memKV struct {
	mu   sync.Mutex
	rev  uint64
	vals map[string]memEntry
}

type memEntry struct {
	val []byte
	rev uint64
}

func newMemKV() *memKV { return &memKV{vals: map[string]memEntry{}} }

func (m *memKV) Get(_ context.Context, key string) ([]byte, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.vals[key]
	if !ok {
		return nil, 0, fmt.Errorf("get %s: %w", key, sentinel.ErrNotFound)
	}
	return append([]byte(nil), e.val...), e.rev, nil
}

func (m *memKV) Create(_ context.Context, key string, val []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.vals[key]; ok {
		return 0, fmt.Errorf("create %s: %w", key, sentinel.ErrConflict)
	}
	m.rev++
	m.vals[key] = memEntry{append([]byte(nil), val...), m.rev}
	return m.rev, nil
}

func (m *memKV) Update(_ context.Context, key string, val []byte, rev uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.vals[key]; !ok || e.rev != rev {
		return 0, fmt.Errorf("update %s: %w", key, sentinel.ErrConflict)
	}
	m.rev++
	m.vals[key] = memEntry{append([]byte(nil), val...), m.rev}
	return m.rev, nil
}

func (m *memKV) Put(_ context.Context, key string, val []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rev++
	m.vals[key] = memEntry{append([]byte(nil), val...), m.rev}
	return m.rev, nil
}

func (m *memKV) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.vals, key)
	return nil
}

func (m *memKV) Keys(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.vals))
	for k := range m.vals {
		out = append(out, k)
	}
	return out, nil
}

// memLocker is a process-local providers.Locker.
type memLocker struct{}

var memLocks sync.Map

func (memLocker) Lock(_ context.Context, name string) (func(), error) {
	m, _ := memLocks.LoadOrStore(name, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}

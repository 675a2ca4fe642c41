package providers

import "context"

// KV is the compare-and-set store a provider may keep records in (the
// webhook hook store). Errors wrap sentinel.ErrNotFound and
// sentinel.ErrConflict. bus.KV implements it on a JetStream bucket.
type KV interface {
	Get(ctx context.Context, key string) ([]byte, uint64, error)
	Create(ctx context.Context, key string, val []byte) (uint64, error)
	Update(ctx context.Context, key string, val []byte, rev uint64) (uint64, error)
	Put(ctx context.Context, key string, val []byte) (uint64, error)
	Delete(ctx context.Context, key string) error
	Keys(ctx context.Context) ([]string, error)
}

// Locker hands out named locks that hold across nodes (bus.Locker).
type Locker interface {
	Lock(ctx context.Context, name string) (unlock func(), err error)
}

// CredentialSource returns the stored setup fields of a provider (sensitive
// ones included); an empty map when nothing is stored.
type CredentialSource interface {
	Credentials(ctx context.Context, slug string) (map[string]string, error)
}

// PublicURL is the resolved public origin of the daemon: URL without a
// trailing slash, Stable when it comes from configuration (or a stable
// tunnel). URL is empty when none is known.
type PublicURL struct {
	URL    string `json:"url"`
	Stable bool   `json:"stable"`
	Source string `json:"source"`
}

// PublicURLFunc resolves the public URL at call time.
type PublicURLFunc func() PublicURL

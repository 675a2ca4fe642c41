package localgh

import (
	"context"
	"errors"
	"sync"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Sharing bounds: the answers one tick keeps for its later polls. The poll
// loop polls sentinels oldest first, so sentinels of one PR need not be
// next to each other: the bound is wide enough for every GET of the
// sentinels of a few hundred PRs, and an answer it let go costs only a
// conditional request (a 304, no quota) to the poll that needed it again.
const (
	maxSharedFetches = 2048
	maxSharedBytes   = 32 << 20
)

// fetchShare holds one poll tick's GETs by path, so the polls of a tick
// that make the same request (sentinels watching the same PR or
// repository) share one answer, each still diffing against its own
// cursor. Answers are read-only once shared. A fetch that failed because
// its poll's context ended is not shared (the next poll fetches itself);
// any other error is, as GitHub would answer it again.
type fetchShare struct {
	mu    sync.Mutex
	m     map[string]*sharedFetch
	order []string // keys of m, oldest first
	bytes int
}

type sharedFetch struct {
	done  chan struct{}
	resp  *github.Response
	pages *github.Pages
	err   error
	size  int
	// counted: size is in fetchShare.bytes (mu held).
	counted bool
	retry   bool // the fetch's context ended: fetch again
}

type shareKey struct{}

// shareOf returns ctx's tick's fetch share, or nil outside a tick.
func shareOf(ctx context.Context) *fetchShare {
	t := providers.TickOf(ctx)
	if t == nil {
		return nil
	}
	return t.Value(shareKey{}, func() any { return &fetchShare{m: map[string]*sharedFetch{}} }).(*fetchShare)
}

// get is Client.Get, shared within a tick.
func (p *Provider) get(ctx context.Context, path string) (*github.Response, error) {
	f, err := shareOf(ctx).do(ctx, "get "+path, func() (*sharedFetch, error) {
		r, err := p.clientFor(ctx, path).Get(ctx, path)
		return &sharedFetch{resp: r, size: respSize(r)}, err
	})
	if f == nil {
		return nil, err
	}
	return f.resp, err
}

// getPages is Client.GetPages, shared within a tick.
func (p *Provider) getPages(ctx context.Context, path string) (*github.Pages, error) {
	f, err := shareOf(ctx).do(ctx, "pages "+path, func() (*sharedFetch, error) {
		ps, err := p.clientFor(ctx, path).GetPages(ctx, path)
		n := 0
		if ps != nil {
			for _, r := range ps.Responses {
				n += respSize(r)
			}
		}
		return &sharedFetch{pages: ps, size: n}, err
	})
	if f == nil {
		return nil, err
	}
	return f.pages, err
}

func respSize(r *github.Response) int {
	if r == nil {
		return 0
	}
	return len(r.Body) + 256
}

// do returns the tick's answer for key, fetching it once: a poll asking
// while another fetches the same key waits for it. With no share (outside
// a tick) it just fetches.
func (s *fetchShare) do(ctx context.Context, key string, fetch func() (*sharedFetch, error)) (*sharedFetch, error) {
	if s == nil {
		return fetch()
	}
	for {
		s.mu.Lock()
		f, ok := s.m[key]
		if !ok {
			f = &sharedFetch{done: make(chan struct{})}
			s.m[key] = f
			s.order = append(s.order, key)
			s.mu.Unlock()
			got, err := fetch()
			s.settle(ctx, key, f, got, err)
			return f, f.err
		}
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !f.retry {
			return f, f.err
		}
	}
}

// settle publishes a fetch's answer to its waiters and keeps it for the
// rest of the tick, within the bounds (oldest answers let go first).
func (s *fetchShare) settle(ctx context.Context, key string, f, got *sharedFetch, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(f.done)
	if got != nil {
		f.resp, f.pages, f.size = got.resp, got.pages, got.size
	}
	f.err = err
	kept := s.m[key] == f // not let go while it was fetched
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		f.retry = true
		if kept {
			s.drop(key)
		}
		return
	}
	if !kept {
		return
	}
	s.bytes += f.size
	f.counted = true
	for len(s.order) > 1 && (len(s.m) > maxSharedFetches || s.bytes > maxSharedBytes) {
		s.drop(s.order[0])
	}
}

// drop forgets key (mu must be held).
func (s *fetchShare) drop(key string) {
	if f, ok := s.m[key]; ok {
		if f.counted {
			s.bytes -= f.size
		}
		delete(s.m, key)
	}
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

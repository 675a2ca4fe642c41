package providers

import (
	"fmt"
)

// Registry holds the explicit, ordered list of providers. It is built once
// at start-up (no init-time registration) and is read-only afterwards.
type Registry struct {
	order []string
	byKey map[string]Provider
}

// NewRegistry returns a registry of ps in catalogue order. Duplicate slugs
// are an error.
func NewRegistry(ps ...Provider) (*Registry, error) {
	r := &Registry{byKey: map[string]Provider{}}
	for _, p := range ps {
		slug := p.Info().Slug
		if _, dup := r.byKey[slug]; dup {
			return nil, fmt.Errorf("provider %q registered twice", slug)
		}
		r.byKey[slug] = p
		r.order = append(r.order, slug)
	}
	return r, nil
}

// Get returns the provider with the slug.
func (r *Registry) Get(slug string) (Provider, bool) {
	p, ok := r.byKey[slug]
	return p, ok
}

// All returns the providers in catalogue order.
func (r *Registry) All() []Provider {
	out := make([]Provider, 0, len(r.order))
	for _, s := range r.order {
		out = append(out, r.byKey[s])
	}
	return out
}

// Slugs returns the slugs in catalogue order.
func (r *Registry) Slugs() []string { return append([]string(nil), r.order...) }

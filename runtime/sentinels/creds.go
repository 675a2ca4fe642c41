package sentinels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/providers"
)

// credUpdateAttempts bounds the compare-and-set retries of one Update.
const credUpdateAttempts = 8

// CredStore keeps provider setup fields (sensitive ones included) in a KV
// bucket keyed by slug. It implements providers.CredentialSource. Values
// never leave the daemon through a view.
type CredStore struct {
	kv *bus.KV
}

// NewCredStore returns the store.
func NewCredStore(kv jetstream.KeyValue) *CredStore { return &CredStore{kv: bus.NewKV(kv)} }

// Credentials returns the stored fields of a provider (empty when none),
// without the store's own marks (keys starting with "_").
func (c *CredStore) Credentials(ctx context.Context, slug string) (map[string]string, error) {
	cur, _, err := c.load(ctx, slug)
	for k := range cur {
		if strings.HasPrefix(k, "_") {
			delete(cur, k)
		}
	}
	return cur, err
}

// endpointMark is the store's own mark, in a provider's fields, of an
// endpoint that the last setup changed and no later setup confirmed:
// auto-selection passes the provider by (Service.Select).
const endpointMark = "_endpointUnconfirmed"

// EndpointUnconfirmed reports whether the provider's endpoint was changed
// by its last setup and not confirmed since (a setup restating it).
func (c *CredStore) EndpointUnconfirmed(ctx context.Context, slug string) (bool, error) {
	cur, _, err := c.load(ctx, slug)
	if err != nil {
		return false, err
	}
	return cur[endpointMark] != "", nil
}

// load returns the stored fields and their revision (0 when none).
func (c *CredStore) load(ctx context.Context, slug string) (map[string]string, uint64, error) {
	raw, rev, err := c.kv.Get(ctx, slug)
	if errors.Is(err, sentinel.ErrNotFound) {
		return map[string]string{}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("credentials of %s: %w", slug, err)
	}
	out := map[string]string{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, 0, fmt.Errorf("credentials of %s: corrupt record", slug)
	}
	return out, rev, nil
}

// Update replaces the stored fields of slug with change(current) under
// compare-and-set: a concurrent setup makes it re-read and call change
// again, so change always decides on the fields it replaces. An error from
// change aborts the update and is returned as is.
func (c *CredStore) Update(ctx context.Context, slug string, change func(cur map[string]string) (map[string]string, error)) error {
	for range credUpdateAttempts {
		cur, rev, err := c.load(ctx, slug)
		if err != nil {
			return err
		}
		next, err := change(cur)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("encode credentials: %w", err)
		}
		if rev == 0 {
			_, err = c.kv.Create(ctx, slug, raw)
		} else {
			_, err = c.kv.Update(ctx, slug, raw, rev)
		}
		if errors.Is(err, sentinel.ErrConflict) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store credentials of %s: %w", slug, err)
		}
		return nil
	}
	return sentinel.Errorf(sentinel.CodeConflict, "credentials of %s changed concurrently; retry the setup", slug)
}

// Merge stores fields over the existing ones (an empty value deletes a
// field), with no setup rule applied.
func (c *CredStore) Merge(ctx context.Context, slug string, fields map[string]string) error {
	return c.Update(ctx, slug, func(cur map[string]string) (map[string]string, error) {
		return mergeFields(cur, fields), nil
	})
}

// mergeFields returns cur with fields laid over it (an empty value deletes
// a field). cur is not modified.
func mergeFields(cur, fields map[string]string) map[string]string {
	out := make(map[string]string, len(cur)+len(fields))
	for k, v := range cur {
		out[k] = v
	}
	for k, v := range fields {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// applySetup checks one setup call of slug against the stored fields cur
// and returns the fields to store. Every Required field must be given or
// already stored (invalid_setup). Sensitive fields are bound to the
// Endpoint field (where the provider sends them):
//
//   - an endpoint value must be a secure URL (insecure_url);
//   - a call that changes the endpoint, or clears it back to the provider's
//     default, must supply every stored Sensitive field again
//     (setup_credentials_required): a stored secret never follows a new URL;
//   - a call that supplies a Sensitive field while an endpoint is stored
//     must restate the endpoint (setup_endpoint_required): a new secret never
//     goes to a URL an earlier setup chose.
//
// So neither half of a (secret, URL) pair can be swapped under the other,
// whoever asks. A call that sets an endpoint to a new custom value marks
// it unconfirmed (endpointMark, in the same write): auto-selection passes
// the provider by until a later setup restates the endpoint as it is, or
// resets it to the provider's default.
func applySetup(slug string, declared []providers.SetupField, cur, fields map[string]string) (map[string]string, error) {
	for _, f := range declared {
		if f.Required && fields[f.Name] == "" && cur[f.Name] == "" {
			return nil, sentinel.Errorf(sentinel.CodeInvalidSetup, "%s needs the field %q", slug, f.Name)
		}
	}
	for _, e := range declared {
		if !e.Endpoint {
			continue
		}
		v, given := fields[e.Name]
		if given && v != "" {
			if err := providers.CheckSecureURL(v); err != nil {
				return nil, sentinel.Errorf(sentinel.CodeInsecureURL, "%s setup field %q: %v", slug, e.Name, err)
			}
		}
		for _, s := range declared {
			if !s.Sensitive {
				continue
			}
			switch {
			case given && !sameEndpoint(cur[e.Name], v) && fields[s.Name] == "" && cur[s.Name] != "":
				return nil, sentinel.Errorf(sentinel.CodeSetupCredentialsRequired,
					"%s: changing %q needs %q again in the same setup (a stored secret is never sent to a new URL)", slug, e.Name, s.Name)
			case !given && fields[s.Name] != "" && cur[e.Name] != "":
				return nil, sentinel.Errorf(sentinel.CodeSetupEndpointRequired,
					"%s: a new %q needs %q restated in the same setup (a custom %s is stored; a new secret never goes to a URL an earlier setup chose)", slug, s.Name, e.Name, e.Name)
			}
		}
	}
	next := mergeFields(cur, fields)
	for _, e := range declared {
		v, given := fields[e.Name]
		switch {
		case !e.Endpoint || !given:
		case v != "" && !sameEndpoint(cur[e.Name], v):
			next[endpointMark] = "1"
		default: // restated as it is, or reset to the default
			delete(next, endpointMark)
		}
	}
	return next, nil
}

// sameEndpoint reports whether two endpoint values name the same URL,
// ignoring surrounding space and trailing slashes.
func sameEndpoint(a, b string) bool {
	norm := func(s string) string { return strings.TrimRight(strings.TrimSpace(s), "/") }
	return norm(a) == norm(b)
}

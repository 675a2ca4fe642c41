package providers

import (
	"context"

	"github.com/agentproto/sentinel"
)

// RouteOwner is implemented by a provider that owns one reserved push
// route, /inbound/sentinel-<RouteKey()>, shared by all its sentinels (the
// GitHub App's one webhook). The route exists whether or not a sentinel is
// bound to it: deliveries that concern no sentinel (an installation
// change) still reach ParseInbound, called with a handle that carries only
// the provider and the key.
type RouteOwner interface {
	// RouteKey is the reserved hook key; "" when the provider serves no
	// route right now (not set up).
	RouteKey() string
	// Concerns reports whether the events parsed from one delivery concern
	// the sentinel of handle h: the route fans a delivery out only to
	// those.
	Concerns(h sentinel.Handle, events []sentinel.Event) bool
}

// Coverer is implemented by a provider that serves only some subjects of
// its scheme (the GitHub App: the repositories it is installed on).
// Auto-selection passes it by for a spec it does not cover; an explicit
// choice of it is never second-guessed (its Create names the fix).
type Coverer interface {
	// Covers reports whether the provider can watch every subject of spec
	// now. It is bounded by ctx and never panics; a failure counts as not
	// covered.
	Covers(ctx context.Context, spec sentinel.Spec) bool
}

package localgh

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Poll implements providers.Poller. It fetches the watched PR (or
// repository) conditionally, diffs against the cursor and returns the
// events in the spec's order with the new cursor. limit is ignored: a
// snapshot diff cannot be split.
//
// Poll failures (GitHub errors, rate limits, a logged-out gh) are not
// returned as errors: they are recorded in the cursor (consecutive
// failures, last error, next retry), back off 30 s doubling to 300 s with
// no request meanwhile, and surface through Status and as the result's
// Failure (so the sentinel's lastError shows them). A handle that can
// never be polled (a bad remote id) is an error.
func (p *Provider) Poll(ctx context.Context, h sentinel.Handle, _ int) (providers.PollResult, error) {
	ref, err := handleRef(h)
	if err != nil {
		return providers.PollResult{Cursor: h.Cursor}, err
	}
	var res providers.PollResult
	if ref.Number > 0 {
		res, err = p.pollPR(ctx, ref, h.Cursor, optInOf(h))
	} else {
		res, err = p.pollRepo(ctx, ref, h.Cursor, optInOf(h))
	}
	if err == nil {
		p.cfg.Self.Mark(ctx, res.Events) // the loop shield: events the credential's own identity caused
	}
	return res, err
}

// failure logs a failed poll and returns the message and the wait GitHub
// asked for.
func (p *Provider) failure(ref sentinel.GitHubRef, err error) (string, int64) {
	var pe *providers.Error
	var wait int64
	if errors.As(err, &pe) {
		wait = int64(pe.RetryAfter)
	}
	p.cfg.Logger.Warn("local-gh poll failed", "subject", ref.Subject(), "reason", providers.ReasonOf(err).String(), "err", err)
	return err.Error(), wait
}

// optIn says which opt-in types a sentinel asked for (its handle's state
// "optIn", set at create): local-gh makes the requests and the events of
// those types only for the sentinels that want them, so a default watch
// costs nothing more.
type optIn struct {
	reviewComments, jobs bool
}

// Opt-in families of the handle state.
const (
	optReviewComments = "review_comments"
	optJobs           = "jobs"
)

func optInOf(h sentinel.Handle) optIn {
	var o optIn
	for _, f := range strings.Split(h.StateString("optIn"), ",") {
		switch f {
		case optReviewComments:
			o.reviewComments = true
		case optJobs:
			o.jobs = true
		}
	}
	return o
}

// optInFor is the handle state "optIn" of a clause with types (none:
// the defaults, which hold no opt-in type).
func optInFor(types []string) string {
	var out []string
	wants := func(typ string) bool {
		return slices.ContainsFunc(types, func(g string) bool { return sentinel.GlobMatch(g, typ) })
	}
	if wants(typeReviewComment) {
		out = append(out, optReviewComments)
	}
	if wants(typeJob) {
		out = append(out, optJobs)
	}
	return strings.Join(out, ",")
}

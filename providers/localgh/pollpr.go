package localgh

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// prFetch is one PR-scope poll's responses.
type prFetch struct {
	pr                *github.Response
	reviews, comments *github.Pages
	checks            checksResp
	commentsPath      string
	// commentsBaseline: the cursor had no comment position, so every
	// comment fetched now is history.
	commentsBaseline bool
}

// etags lists the ETags of the PR and of every page of its lists (the PR's
// first); a missing list or ETag makes the set unusable.
func (f *prFetch) etags() []string {
	if f.pr == nil || f.pr.ETag == "" {
		return nil
	}
	out := []string{f.pr.ETag}
	for _, ps := range append([]*github.Pages{f.reviews, f.comments}, f.checks.pages()...) {
		if ps == nil {
			return nil
		}
		tags := ps.ETags()
		if tags == nil {
			return nil
		}
		out = append(out, tags...)
	}
	return out
}

// pollPR polls one pull request; opt says which opt-in types its sentinel
// asked for.
func (p *Provider) pollPR(ctx context.Context, ref sentinel.GitHubRef, raw string, opt optIn) (providers.PollResult, error) {
	now := p.cfg.Now()
	cur := parsePRCursor(raw)
	if cur.backingOff(now) {
		return providers.PollResult{Cursor: raw, Failure: cur.LastError}, nil
	}
	f, head, err := p.fetchPR(ctx, ref, &cur)
	if err != nil {
		msg, wait := p.failure(ref, err)
		cur.fail(now, msg, time.Duration(wait))
		return providers.PollResult{Cursor: encode(cur), Failure: msg}, nil
	}
	sig := joinSig(f.etags())
	if sig != "" && sig == cur.Sig && cur.Snapshot != nil && cur.Failures == 0 && head == cur.Snapshot.Head {
		return providers.PollResult{Cursor: raw}, nil // quiet: nothing changed, nothing decoded
	}
	events, next, err := p.diffPR(ctx, ref, cur, f, now, opt)
	if err != nil {
		msg, wait := p.failure(ref, err)
		cur.fail(now, msg, time.Duration(wait))
		return providers.PollResult{Cursor: encode(cur), Failure: msg}, nil
	}
	next.Sig = sig
	return providers.PollResult{Events: events, Cursor: encode(next)}, nil
}

// fetchPR makes the conditional GETs of one poll: the PR, its reviews, the
// check runs and combined status of its head (in the fork too, for a
// fork's PR), and its comments since the cursor's position. It returns the
// head sha it used.
func (p *Provider) fetchPR(ctx context.Context, ref sentinel.GitHubRef, cur *prCursor) (*prFetch, string, error) {
	f := &prFetch{}
	var err error
	if f.pr, err = p.get(ctx, repoPath(ref, "/pulls/%d", ref.Number)); err != nil {
		return nil, "", err
	}
	head, headRepo := "", ""
	f.commentsBaseline = cur.Comments == nil
	if cur.Snapshot != nil && cur.Sig != "" && sigPart(cur.Sig, 0) == f.pr.ETag {
		head, headRepo = cur.Snapshot.Head, cur.Snapshot.HeadRepo
	} else {
		var pr github.PullRequest
		if err := decode(f.pr, "pull", &pr); err != nil {
			return nil, "", err
		}
		head, headRepo = pr.Head.SHA, pr.HeadRepo(ref.FullName())
		if cur.Comments == nil {
			from := pr.UpdatedAt.UTC().Format(time.RFC3339)
			cur.Comments = &comments{From: from, Since: from}
		}
	}
	if f.reviews, err = p.list(ctx, ref, repoPath(ref, "/pulls/%d/reviews?per_page=100", ref.Number)); err != nil {
		return nil, "", err
	}
	if f.checks, err = p.fetchChecks(ctx, ref, head, headRepo); err != nil {
		return nil, "", err
	}
	if cur.Comments != nil {
		f.commentsPath = repoPath(ref, "/issues/%d/comments?per_page=100&since=%s", ref.Number, cur.Comments.Since)
		f.comments, err = p.list(ctx, ref, f.commentsPath)
		if err != nil && !optional(err) {
			return nil, "", err
		}
	}
	return f, head, nil
}

// diffPR decodes the responses and applies the spec's diff: closed,
// reviews (each with its inline comments, listed for new reviews only,
// and, when opted in, one review comment event per comment),
// synchronize (a new head resets the checks baseline), one check suite
// rollup (and, when opted in, one job event per GitHub Actions job that
// completed), then comments and, last, the late terminal event.
func (p *Provider) diffPR(ctx context.Context, ref sentinel.GitHubRef, cur prCursor, f *prFetch, now time.Time, opt optIn) ([]sentinel.Event, prCursor, error) {
	var pr github.PullRequest
	if err := decode(f.pr, "pull", &pr); err != nil {
		return nil, cur, err
	}
	reviews, err := decodePages[github.Review](f.reviews, "reviews")
	if err != nil {
		return nil, cur, err
	}
	snap := snapshotOf(&pr, ref.FullName())
	prev := cur.Snapshot
	em := newEmitter(ref, now)
	var events []sentinel.Event

	var newRevs []reviewInfo
	var seen []int64
	if prev != nil {
		seen = prev.Reviews
	}
	newRevs, snap.Reviews = newReviews(reviews, seen, time.Time{}, 0)

	base := map[string]check{}
	if prev != nil && prev.Head == snap.Head {
		base = prev.Checks
	}
	snap.Checks = base
	var done []checkResult
	var parts []string
	pending := 0
	if f.checks.known {
		checks, err := decodeChecks(f.checks)
		if err != nil {
			return nil, cur, err
		}
		done, parts, pending = newlyCompleted(base, checks)
		snap.Checks = checks
	}

	terminal := false
	if prev != nil {
		if prev.State != snap.State && snap.State != stateOpen {
			events = append(events, em.closed(&snap, false))
			terminal = true
		}
		if err := p.withComments(ctx, ref, newRevs); err != nil {
			return nil, cur, err
		}
		for _, r := range newRevs {
			events = append(events, em.review(r))
			if opt.reviewComments {
				for i := range r.Comments {
					events = append(events, em.reviewComment(&r.Comments[i]))
				}
			}
		}
		if prev.Head != "" && snap.Head != "" && prev.Head != snap.Head {
			events = append(events, em.synchronize(&snap))
		}
		if len(done) > 0 {
			events = append(events, em.checkSuite(&snap, done, parts, pending))
			if opt.jobs {
				jobs, err := p.jobsOf(ctx, ref, &snap, done)
				if err != nil {
					return nil, cur, err
				}
				for _, j := range jobs {
					events = append(events, em.job(j))
				}
			}
		}
	}
	cmts, err := p.diffComments(em, &cur, f, prev == nil || f.commentsBaseline)
	if err != nil {
		return nil, cur, err
	}
	events = append(events, cmts...)

	switch {
	case snap.State == stateOpen:
		cur.ClosedEmitted = false
	case terminal:
		cur.ClosedEmitted = true
	case !cur.ClosedEmitted:
		events = append(events, em.closed(&snap, true))
		cur.ClosedEmitted = true
	}
	cur.Snapshot = &snap
	cur.health = health{}
	return events, cur, nil
}

// diffComments emits issue_comment.created for comments newer than the
// cursor (created at or after its baseline, id above the highest seen) and
// advances the `since` position. On the baseline poll every comment is
// history.
func (p *Provider) diffComments(em *emitter, cur *prCursor, f *prFetch, baseline bool) ([]sentinel.Event, error) {
	if f.comments == nil || cur.Comments == nil {
		return nil, nil
	}
	list, err := decodePages[github.IssueComment](f.comments, "comments")
	if err != nil {
		return nil, err
	}
	from := parseTime(cur.Comments.From)
	next := *cur.Comments
	var out []sentinel.Event
	slices.SortFunc(list, func(a, b github.IssueComment) int { return cmpInt64(a.ID, b.ID) })
	for _, c := range list {
		if c.ID > cur.Comments.MaxID && !c.CreatedAt.Before(from) && !baseline {
			out = append(out, em.comment(commentInfo{ID: c.ID, Login: github.LoginOf(c.User), Bot: c.User.IsBot(),
				Assoc: c.AuthorAssociation, Body: c.Body, URL: c.HTMLURL, CreatedAt: c.CreatedAt}))
		}
		next.MaxID = max(next.MaxID, c.ID)
		if u := c.UpdatedAt.UTC().Format(time.RFC3339); u > next.Since {
			next.Since = u
		}
	}
	cur.Comments = &next
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// joinSig joins ETags into a cursor signature ("" when unusable).
func joinSig(etags []string) string { return strings.Join(etags, " ") }

// sigPart returns the i-th ETag of a signature.
func sigPart(sig string, i int) string {
	parts := strings.Split(sig, " ")
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

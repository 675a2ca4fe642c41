package localgh

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// repoListSize is how many most recently updated PRs a repository poll
// lists (one conditional request).
const repoListSize = 30

// CI verdicts of a head (repository scope).
const (
	verdictFailure = "failure"
	verdictPending = "pending"
	verdictNone    = "none"
)

// pollRepo polls a repository: one conditional list of the most recently
// updated PRs, per-PR reviews only for PRs whose updated_at or head moved,
// and the checks of open PRs whose head has no verdict yet. A quiet
// repository costs one 304.
func (p *Provider) pollRepo(ctx context.Context, ref sentinel.GitHubRef, raw string, opt optIn) (providers.PollResult, error) {
	now := p.cfg.Now()
	cur := parseRepoCursor(raw)
	if cur.backingOff(now) {
		return providers.PollResult{Cursor: raw, Failure: cur.LastError}, nil
	}
	t := &repoTick{p: p, ref: ref, cur: &cur, now: now, opt: opt}
	if err := t.run(ctx); err != nil {
		msg, wait := p.failure(ref, err)
		cur.fail(now, msg, time.Duration(wait))
		return providers.PollResult{Cursor: encode(cur), Failure: msg}, nil
	}
	if !t.dirty && cur.Failures == 0 {
		return providers.PollResult{Cursor: raw}, nil
	}
	cur.health = health{}
	compact(&cur)
	return providers.PollResult{Events: t.events, Cursor: encode(cur)}, nil
}

// repoTick is one repository poll in progress. cur is written only after
// every fetch succeeded, so a failure part-way keeps the last good state.
type repoTick struct {
	p      *Provider
	ref    sentinel.GitHubRef
	cur    *repoCursor
	now    time.Time
	events []sentinel.Event
	dirty  bool
	opt    optIn
}

func (t *repoTick) run(ctx context.Context) error {
	path := repoPath(t.ref, "/pulls?state=all&sort=updated&direction=desc&per_page=%d", repoListSize)
	resp, err := t.p.get(ctx, path)
	if err != nil {
		return err
	}
	// The baseline is the first successful tick (an empty repository's
	// cursor has no PRs but is baselined).
	baseline := t.cur.PRs == nil && t.cur.BaselinedAt == ""
	baselinedAt, listETag := t.cur.BaselinedAt, t.cur.ListETag
	if baseline {
		at := resp.Date
		if at.IsZero() {
			at = t.now
		}
		baselinedAt = at.UTC().Format(time.RFC3339)
	}
	listed := map[int]*github.PullRequest{}
	decoded := resp.ETag == "" || resp.ETag != listETag
	if decoded {
		var list []github.PullRequest
		if err := decode(resp, "pulls", &list); err != nil {
			return err
		}
		for i := range list {
			listed[list[i].Number] = &list[i]
		}
		listETag = resp.ETag
	}
	var nums []int
	for n := range listed {
		nums = append(nums, n)
	}
	next := make(map[string]*repoPR, len(t.cur.PRs)+len(listed))
	for k, v := range t.cur.PRs {
		cp := *v
		n, _ := strconv.Atoi(k)
		if decoded {
			cp.InList = listed[n] != nil
		}
		if listed[n] == nil && cp.InList && cp.Snap.State == stateOpen && !strings.HasPrefix(cp.CIReported, cp.Snap.Head+":") {
			nums = append(nums, n)
		}
		next[k] = &cp
	}
	dormant := maps.Clone(t.cur.Dormant)
	for n, pr := range listed {
		k := strconv.Itoa(n)
		if d, ok := dormant[k]; ok && next[k] == nil {
			next[k] = d.revive(pr) // back from dormancy: known, open when it left
			delete(dormant, k)
		}
	}
	sort.Ints(nums)
	var events []sentinel.Event
	for _, n := range nums {
		evs, err := t.pr(ctx, n, listed[n], next, baseline, baselinedAt)
		if err != nil {
			return err
		}
		events = append(events, evs...)
	}
	// Every fetch succeeded: commit.
	if baseline || decoded || len(events) > 0 {
		t.dirty = true
	}
	t.cur.PRs, t.cur.Dormant, t.cur.BaselinedAt, t.cur.ListETag = next, dormant, baselinedAt, listETag
	t.events = events
	return nil
}

// pr processes one PR (pr nil: unchanged since the last list, CI only).
func (t *repoTick) pr(ctx context.Context, n int, pr *github.PullRequest, prs map[string]*repoPR, baseline bool, from string) ([]sentinel.Event, error) {
	key := strconv.Itoa(n)
	prev := prs[key]
	ref := t.ref
	ref.Number = n
	em := newEmitter(ref, t.now)

	var e *repoPR
	var events []sentinel.Event
	silentCI := baseline
	terminal := false
	switch {
	case pr == nil:
		e = prev
	case baseline || (prev == nil && !parseTime(from).Before(pr.CreatedAt)) ||
		(prev == nil && pr.State == "closed" && n <= t.cur.EvictedMax):
		// At the baseline, a PR that predates the watch and only now
		// appears in the list, or a closed one evicted after its closure
		// was reported: recorded silently; its state is history.
		e = &repoPR{Snap: snapshotOf(pr, t.ref.FullName())}
		e.Snap.ReviewsFrom = from
		e.ClosedEmitted = e.Snap.State != stateOpen
		silentCI = true
	case prev == nil:
		e = &repoPR{Snap: snapshotOf(pr, t.ref.FullName())}
		e.Snap.ReviewsFrom = from
		em.decorate = &e.Snap
		events = append(events, em.opened(&e.Snap))
		if e.Snap.State != stateOpen {
			events = append(events, em.closed(&e.Snap, false))
			terminal = true
		}
		revs, err := t.reviews(ctx, ref, &e.Snap)
		if err != nil {
			return nil, err
		}
		events = append(events, revs...)
	case prev.ClosedEmitted && pr.State == "closed":
		e = prev
		e.Snap.Updated = pr.UpdatedAt.UTC().Format(time.RFC3339)
	case prev.ClosedEmitted:
		// Reopened: a fresh baseline for this PR.
		e = &repoPR{Snap: snapshotOf(pr, t.ref.FullName())}
		e.Snap.ReviewsFrom = pr.UpdatedAt.UTC().Format(time.RFC3339)
		silentCI = true
	default:
		e = prev
		old := prev.Snap
		e.Snap = snapshotOf(pr, t.ref.FullName())
		e.Snap.Reviews, e.Snap.ReviewsFrom, e.Snap.ReviewsAbove = old.Reviews, old.ReviewsFrom, old.ReviewsAbove
		em.decorate = &e.Snap
		if old.Draft && !e.Snap.Draft && e.Snap.State == stateOpen {
			events = append(events, em.ready(&e.Snap))
		}
		if old.State != e.Snap.State && e.Snap.State != stateOpen {
			events = append(events, em.closed(&e.Snap, false))
			terminal = true
		}
		if old.Updated != e.Snap.Updated || old.Head != e.Snap.Head {
			revs, err := t.reviews(ctx, ref, &e.Snap)
			if err != nil {
				return nil, err
			}
			events = append(events, revs...)
		}
	}
	em.decorate = &e.Snap
	if e.Snap.State == stateOpen && !strings.HasPrefix(e.CIReported, e.Snap.Head+":") {
		ev, err := t.verdict(ctx, ref, em, e, silentCI)
		if err != nil {
			return nil, err
		}
		events = append(events, ev...)
	}
	switch {
	case e.Snap.State == stateOpen:
		e.ClosedEmitted = false
	case terminal:
		e.ClosedEmitted = true
	case !e.ClosedEmitted:
		events = append(events, em.closed(&e.Snap, true))
		e.ClosedEmitted = true
	}
	e.InList = e.InList || pr != nil
	prs[key] = e
	return events, nil
}

// reviews fetches the PR's reviews and returns events for the new ones
// (submitted at or after the snapshot's ReviewsFrom).
func (t *repoTick) reviews(ctx context.Context, ref sentinel.GitHubRef, s *snapshot) ([]sentinel.Event, error) {
	ps, err := t.p.list(ctx, ref, repoPath(ref, "/pulls/%d/reviews?per_page=100", ref.Number))
	if err != nil {
		if optional(err) {
			return nil, nil
		}
		return nil, err
	}
	list, err := decodePages[github.Review](ps, "reviews")
	if err != nil {
		return nil, err
	}
	em := newEmitter(ref, t.now)
	em.decorate = s
	var revs []reviewInfo
	revs, s.Reviews = newReviews(list, s.Reviews, parseTime(s.ReviewsFrom), s.ReviewsAbove)
	if err := t.p.withComments(ctx, ref, revs); err != nil {
		return nil, err
	}
	out := make([]sentinel.Event, 0, len(revs))
	for _, r := range revs {
		out = append(out, em.review(r))
		if t.opt.reviewComments {
			for i := range r.Comments {
				out = append(out, em.reviewComment(&r.Comments[i]))
			}
		}
	}
	return out, nil
}

// verdict fetches the head's checks and emits one CI verdict per head once
// it is settled: failure as soon as any check fails, else success or
// neutral when all completed. silent records it as history.
func (t *repoTick) verdict(ctx context.Context, ref sentinel.GitHubRef, em *emitter, e *repoPR, silent bool) ([]sentinel.Event, error) {
	cr, err := t.p.fetchChecks(ctx, ref, e.Snap.Head, e.Snap.HeadRepo)
	if err != nil || !cr.known {
		return nil, err
	}
	checks, err := decodeChecks(cr)
	if err != nil {
		return nil, err
	}
	v, failed := verdictOf(checks)
	if v == verdictPending || v == verdictNone {
		return nil, nil
	}
	mark := e.Snap.Head + ":" + v
	if mark == e.CIReported {
		return nil, nil
	}
	e.CIReported = mark
	t.dirty = true
	if silent {
		return nil, nil
	}
	return []sentinel.Event{em.ci(&e.Snap, v, failed)}, nil
}

// verdictOf rolls a head's checks into failure (any failed), pending (any
// running), none (no checks), or the worst-of success/neutral.
func verdictOf(checks map[string]check) (string, []string) {
	if len(checks) == 0 {
		return verdictNone, nil
	}
	var failed []string
	pending := false
	all := make([]checkResult, 0, len(checks))
	for name, c := range checks {
		switch {
		case c.C == "":
			pending = true
		case rollup([]checkResult{{Conclusion: c.C}}) == "failure":
			failed = append(failed, name)
		}
		all = append(all, checkResult{Name: name, Conclusion: c.C})
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return verdictFailure, failed
	}
	if pending {
		return verdictPending, nil
	}
	return rollup(all), nil
}

func (e *emitter) opened(s *snapshot) sentinel.Event {
	summary := fmt.Sprintf("PR %s opened", e.name)
	if s.Author != "" {
		summary += " by " + s.Author
	}
	if s.Draft {
		summary += " (draft)"
	}
	data := withTrust(map[string]any{"action": "opened"}, prTrust(s, s.Author, false))
	return e.build(typeOpened, []string{"opened"}, summary, false, parseTime(s.Updated), data)
}

func (e *emitter) ready(s *snapshot) sentinel.Event {
	data := withTrust(map[string]any{"action": "ready_for_review"}, prTrust(s, "", false))
	return e.build(typeReady, []string{"ready", s.Head}, fmt.Sprintf("PR %s ready for review", e.name), false, parseTime(s.Updated), data)
}

func (e *emitter) ci(s *snapshot, verdict string, failed []string) sentinel.Event {
	data := withTrust(map[string]any{"action": "completed", "conclusion": verdict, "headSha": s.Head}, prTrust(s, "", false))
	if len(failed) > 0 {
		data["failed"] = failed
	}
	return e.build(typeChecks, []string{"ci", s.Head, verdict}, fmt.Sprintf("CI %s for %s", verdict, e.name), false, time.Time{}, data)
}

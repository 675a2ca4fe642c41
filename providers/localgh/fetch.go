package localgh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// optional reports whether a failed call may be skipped for this tick
// rather than failing the poll: a non-retryable 403/404 on an auxiliary
// resource (a token without checks or issues read access).
func optional(err error) bool {
	var pe *providers.Error
	return errors.As(err, &pe) && !pe.Retryable &&
		(pe.Reason == providers.ReasonForbidden || pe.Reason == providers.ReasonNotFound)
}

func decode(resp *github.Response, path string, v any) error {
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("GET %s: invalid JSON: %v", path, err)}
	}
	return nil
}

// decodePages decodes every page of a list of JSON arrays into one slice.
func decodePages[T any](ps *github.Pages, path string) ([]T, error) {
	var out []T
	for _, r := range ps.Responses {
		var page []T
		if err := decode(r, path, &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
	}
	return out, nil
}

// list fetches every page of a list (github.Client.GetPages, shared within
// a poll tick); a list longer than the client's page bound is read up to
// it, with a warning.
func (p *Provider) list(ctx context.Context, ref sentinel.GitHubRef, path string) (*github.Pages, error) {
	ps, err := p.getPages(ctx, path)
	if err == nil && ps.Truncated {
		p.cfg.Logger.Warn("local-gh list truncated at the page bound; later items are not seen",
			"subject", ref.Subject(), "path", path, "pages", len(ps.Responses))
	}
	return ps, err
}

func repoPath(ref sentinel.GitHubRef, format string, args ...any) string {
	return "/repos/" + ref.FullName() + fmt.Sprintf(format, args...)
}

// prState maps a REST pull request to open, closed or merged, with
// GitHub's own time of the closure.
func prState(pr *github.PullRequest) (state, closedAt string) {
	switch {
	case pr.MergedAt != nil:
		return stateMerged, pr.MergedAt.UTC().Format(time.RFC3339)
	case pr.State == "closed":
		at := ""
		if pr.ClosedAt != nil {
			at = pr.ClosedAt.UTC().Format(time.RFC3339)
		}
		return stateClosed, at
	}
	return stateOpen, ""
}

// snapshotOf fills a snapshot's PR fields (not reviews or checks).
func snapshotOf(pr *github.PullRequest, base string) snapshot {
	state, closedAt := prState(pr)
	return snapshot{
		State: state, Head: pr.Head.SHA, HeadRepo: pr.HeadRepo(base), ClosedAt: closedAt, MergedBy: github.LoginOf(pr.MergedBy),
		Draft: pr.Draft, Author: github.LoginOf(pr.User), Assoc: pr.AuthorAssociation,
		Title: pr.Title, URL: pr.HTMLURL, Updated: pr.UpdatedAt.UTC().Format(time.RFC3339),
	}
}

// checksResp are the lists the checks of a head come from: the check runs
// and the combined status of the head in the base repository and, for a
// fork's PR, in the head repository too (checks an App or the fork's own
// workflows report there show on the PR).
type checksResp struct {
	runs, statuses []*github.Pages
	// fromFork[i] says runs[i] (and statuses[i]) are the head repository's.
	fromFork []bool
	headRepo string
	known    bool
}

// pages lists every page set of the checks (for the cursor signature).
func (c checksResp) pages() []*github.Pages {
	return append(append([]*github.Pages(nil), c.runs...), c.statuses...)
}

// fetchChecks gets the check runs and the combined status of sha in the
// base repository and, when headRepo is set (a fork's PR), in the head
// repository. A skippable failure leaves known false (no check events this
// tick); one on the head repository only (a fork deleted or private) keeps
// the base's checks.
func (p *Provider) fetchChecks(ctx context.Context, ref sentinel.GitHubRef, sha, headRepo string) (checksResp, error) {
	if sha == "" {
		return checksResp{}, nil
	}
	out := checksResp{headRepo: headRepo}
	repos := []string{ref.FullName()}
	if headRepo != "" {
		if _, err := sentinel.ParseGitHubSubject("github:" + headRepo); err == nil {
			repos = append(repos, headRepo)
		}
	}
	for i, repo := range repos {
		runs, err := p.list(ctx, ref, "/repos/"+repo+fmt.Sprintf("/commits/%s/check-runs?per_page=100", url.PathEscape(sha)))
		if err == nil {
			var sts *github.Pages
			sts, err = p.list(ctx, ref, "/repos/"+repo+fmt.Sprintf("/commits/%s/status?per_page=100", url.PathEscape(sha)))
			if err == nil {
				out.runs, out.statuses, out.fromFork = append(out.runs, runs), append(out.statuses, sts), append(out.fromFork, i > 0)
				continue
			}
		}
		switch {
		case !optional(err):
			return checksResp{}, err
		case i == 0:
			return checksResp{}, nil
		}
	}
	out.known = true
	return out, nil
}

// decodeChecks maps check runs (conclusion once completed) and commit
// statuses (success; failure or error as failure; pending as running) by
// name, over every page of each repository's lists. A check run wins over
// a status context of the same name; a fork's check whose name the base
// repository's checks already use is named "<name> (<fork>)".
func decodeChecks(cr checksResp) (map[string]check, error) {
	out := map[string]check{}
	for i := range cr.runs {
		var runs github.CheckRuns
		for _, r := range cr.runs[i].Responses {
			var page github.CheckRuns
			if err := decode(r, "check-runs", &page); err != nil {
				return nil, err
			}
			runs.CheckRuns = append(runs.CheckRuns, page.CheckRuns...)
		}
		var combined github.CombinedStatus
		for _, r := range cr.statuses[i].Responses {
			var page github.CombinedStatus
			if err := decode(r, "status", &page); err != nil {
				return nil, err
			}
			combined.Statuses = append(combined.Statuses, page.Statuses...)
		}
		fork := cr.fromFork[i]
		these := make(map[string]check, len(runs.CheckRuns)+len(combined.Statuses))
		for _, st := range combined.Statuses {
			c := ""
			switch st.State {
			case "success":
				c = "success"
			case "failure", "error":
				c = "failure"
			}
			these[st.Context] = check{C: c}
		}
		for _, r := range runs.CheckRuns {
			c := ""
			if strings.EqualFold(r.Status, "completed") && r.Conclusion != nil {
				c = strings.ToLower(*r.Conclusion)
			}
			these[r.Name] = check{C: c, R: r.ID, J: r.IsActionsJob(), F: fork}
		}
		for name, c := range these {
			if _, taken := out[name]; taken && fork {
				name += " (" + cr.headRepo + ")"
			}
			out[name] = c
		}
	}
	return out, nil
}

// newlyCompleted returns the checks of cur that completed since base (a
// conclusion appeared, changed, or a re-run landed), sorted by name, the
// id parts for them, and how many checks are still running.
func newlyCompleted(base, cur map[string]check) (done []checkResult, parts []string, pending int) {
	for name, c := range cur {
		if c.C == "" {
			pending++
			continue
		}
		if b, ok := base[name]; ok && b.C == c.C && b.R == c.R {
			continue
		}
		done = append(done, checkResult{Name: name, Conclusion: c.C})
	}
	sortResults(done)
	for _, d := range done {
		parts = append(parts, fmt.Sprintf("%s:%s:%d", d.Name, d.Conclusion, cur[d.Name].R))
	}
	return done, parts, pending
}

func sortResults(rs []checkResult) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Name < rs[j-1].Name; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// newReviews returns the submitted reviews not in seen (nor before from,
// when set, nor with an id at or below above), in GitHub's order, and the
// updated seen list.
func newReviews(list []github.Review, seen []int64, from time.Time, above int64) ([]reviewInfo, []int64) {
	known := make(map[int64]bool, len(seen))
	for _, id := range seen {
		known[id] = true
	}
	var out []reviewInfo
	ids := make([]int64, 0, len(list))
	for _, r := range list {
		if r.State == "PENDING" || r.SubmittedAt == nil {
			continue
		}
		ids = append(ids, r.ID)
		if known[r.ID] || r.SubmittedAt.Before(from) || r.ID <= above {
			continue
		}
		out = append(out, reviewInfo{ID: r.ID, Login: github.LoginOf(r.User), Bot: r.User.IsBot(), State: r.State,
			SubmittedAt: *r.SubmittedAt, Assoc: r.AuthorAssociation, URL: r.HTMLURL, Body: r.Body, CommitID: r.CommitID})
	}
	return out, ids
}

// withComments lists the inline comments of each review (one GET per new
// review: every inline comment, a reply too, belongs to a review, so the
// comments of new reviews are the new comments). A review whose comments
// GitHub refuses to list (optional) is marked Unavailable.
func (p *Provider) withComments(ctx context.Context, ref sentinel.GitHubRef, revs []reviewInfo) error {
	for i := range revs {
		ps, err := p.list(ctx, ref, repoPath(ref, "/pulls/%d/reviews/%d/comments?per_page=100", ref.Number, revs[i].ID))
		switch {
		case err != nil && optional(err):
			revs[i].Unavailable = true
			continue
		case err != nil:
			return err
		}
		list, err := decodePages[github.ReviewComment](ps, "review comments")
		if err != nil {
			return err
		}
		revs[i].Comments, revs[i].Listed = list, true
	}
	return nil
}

// jobsOf returns the GitHub Actions jobs among the newly completed checks
// (done) of the snapshot's head: a failed one is read from GitHub
// (GET /repos/{repo}/actions/jobs/{id}, in the repository that ran it) for
// its steps; another is told from its check run. A job GitHub refuses to
// show (optional) is told without steps.
func (p *Provider) jobsOf(ctx context.Context, ref sentinel.GitHubRef, s *snapshot, done []checkResult) ([]*github.WorkflowJob, error) {
	var out []*github.WorkflowJob
	for _, d := range done {
		c := s.Checks[d.Name]
		if !c.J || c.R <= 0 {
			continue
		}
		concl := d.Conclusion
		j := &github.WorkflowJob{ID: c.R, Name: d.Name, Status: "completed", Conclusion: &concl, HeadSHA: s.Head}
		if rollup([]checkResult{d}) == "failure" {
			repo := ref.FullName()
			if c.F && s.HeadRepo != "" {
				repo = s.HeadRepo
			}
			resp, err := p.get(ctx, "/repos/"+repo+fmt.Sprintf("/actions/jobs/%d", c.R))
			switch {
			case err != nil && !optional(err):
				return nil, err
			case err == nil:
				var full github.WorkflowJob
				if err := decode(resp, "job", &full); err != nil {
					return nil, err
				}
				j = &full
			}
		}
		out = append(out, j)
	}
	return out, nil
}

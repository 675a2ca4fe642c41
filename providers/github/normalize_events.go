package github

import (
	"encoding/json"
	"fmt"

	"github.com/agentproto/sentinel"
)

// prData is the data projection of a pull_request event.
type prData struct {
	Action  string `json:"action"`
	Merged  bool   `json:"merged"`
	Repo    string `json:"repo"`
	Number  int    `json:"number"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	HeadSHA string `json:"head_sha"`
	whTrust
}

// normalizePullRequest: subject the PR, terminal on closed; "merged by" and
// "closed by" name the sender, who did it, not the PR's author.
func normalizePullRequest(c *whContext, body []byte) (sentinel.Event, error) {
	var p whPullRequestEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	pr := p.PullRequest
	if pr == nil {
		pr = &whPull{}
	}
	n := pr.Number
	if n <= 0 {
		n = p.Number
	}
	if n <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingPullRequestNumber)
	}
	ref := c.repo
	ref.Number = n
	merged := pr.Merged != nil && *pr.Merged
	t := c.trust(pr.User, pr.AuthorAssociation)
	var summary string
	switch {
	case c.action == "closed" && merged:
		summary = fmt.Sprintf("PR %s merged by %s", whTarget(ref), t.actorName())
	case c.action == "closed":
		summary = fmt.Sprintf("PR %s closed by %s", whTarget(ref), t.actorName())
	default:
		summary = fmt.Sprintf("PR %s %s by %s", whTarget(ref), c.action, t.actorName())
	}
	data := prData{
		Action: c.action, Merged: merged, Repo: ref.FullName(), Number: n,
		Title: whCapText(pr.Title), URL: whCapText(pr.HTMLURL), HeadSHA: whCapText(pr.Head.SHA), whTrust: t,
	}
	return c.build(ref, nil, summary, c.action == "closed", data), nil
}

// reviewData is the data projection of a pull_request_review event.
type reviewData struct {
	Action string  `json:"action"`
	State  *string `json:"state"`
	Repo   string  `json:"repo"`
	Number int     `json:"number"`
	URL    string  `json:"url,omitempty"`
	whTrust
}

// normalizePullRequestReview: subject the PR, never terminal.
func normalizePullRequestReview(c *whContext, body []byte) (sentinel.Event, error) {
	var p whReviewEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	if p.PullRequest == nil || p.PullRequest.Number <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingPullRequestNumber)
	}
	ref := c.repo
	ref.Number = p.PullRequest.Number
	data := reviewData{Action: c.action, Repo: ref.FullName(), Number: ref.Number}
	state := "unknown"
	var t whTrust
	if r := p.Review; r != nil {
		if r.State != "" {
			s := whOneLine(r.State, 40)
			state, data.State = s, &s
		}
		data.URL = whCapText(r.HTMLURL)
		t = c.trust(r.User, r.AuthorAssociation)
	} else {
		t = c.trust(nil, "")
	}
	data.whTrust = t
	summary := fmt.Sprintf("PR %s review %s by %s", whTarget(ref), state, t.actorName())
	return c.build(ref, nil, summary, false, data), nil
}

// checkSuiteData is the data projection of a check_suite event.
type checkSuiteData struct {
	Action     string  `json:"action"`
	Conclusion *string `json:"conclusion"`
	Repo       string  `json:"repo"`
	Number     int     `json:"number,omitempty"`
	HeadBranch string  `json:"head_branch,omitempty"`
	HeadSHA    string  `json:"head_sha,omitempty"`
	whTrust
}

// normalizeCheckSuite: subject the suite's first PR of this repository
// (every listed PR is in subjects), else the repository.
func normalizeCheckSuite(c *whContext, body []byte) (sentinel.Event, error) {
	var p whCheckSuiteEvent
	if err := json.Unmarshal(body, &p); err != nil || p.CheckSuite == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	cs := p.CheckSuite
	ref, extra := c.prRef(whPullNumbers(cs.PullRequests, c.repoID))
	data := checkSuiteData{
		Action: c.action, Conclusion: whNonEmpty(cs.Conclusion), Repo: ref.FullName(), Number: ref.Number,
		HeadBranch: whCapText(whDeref(cs.HeadBranch)), HeadSHA: whCapText(cs.HeadSHA), whTrust: c.trust(nil, ""),
	}
	outcome := c.action
	if data.Conclusion != nil {
		outcome = *data.Conclusion
	}
	summary := fmt.Sprintf("Check suite %s for %s", outcome, whTargetBranch(ref, data.HeadBranch))
	return c.build(ref, extra, summary, false, data), nil
}

// workflowRunData is the data projection of a workflow_run event.
type workflowRunData struct {
	Action     string  `json:"action"`
	Name       string  `json:"name"`
	Conclusion *string `json:"conclusion"`
	Repo       string  `json:"repo"`
	Number     int     `json:"number,omitempty"`
	HeadBranch string  `json:"head_branch,omitempty"`
	HeadSHA    string  `json:"head_sha,omitempty"`
	URL        string  `json:"url,omitempty"`
	whTrust
}

// normalizeWorkflowRun: subject the run's first PR of this repository
// (every listed PR is in subjects), else the repository.
func normalizeWorkflowRun(c *whContext, body []byte) (sentinel.Event, error) {
	var p whWorkflowRunEvent
	if err := json.Unmarshal(body, &p); err != nil || p.WorkflowRun == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	run := p.WorkflowRun
	name := run.Name
	if name == "" && p.Workflow != nil {
		name = p.Workflow.Name
	}
	if name == "" {
		name = "workflow"
	}
	name = whOneLine(name, 200)
	ref, extra := c.prRef(whPullNumbers(run.PullRequests, c.repoID))
	data := workflowRunData{
		Action: c.action, Name: name, Conclusion: whNonEmpty(run.Conclusion), Repo: ref.FullName(), Number: ref.Number,
		HeadBranch: whCapText(whDeref(run.HeadBranch)), HeadSHA: whCapText(run.HeadSHA), URL: whCapText(run.HTMLURL),
		whTrust: c.trust(nil, ""),
	}
	outcome := c.action
	if data.Conclusion != nil {
		outcome = *data.Conclusion
	}
	summary := fmt.Sprintf("Workflow run %q %s for %s", name, outcome, whTargetBranch(ref, data.HeadBranch))
	return c.build(ref, extra, summary, false, data), nil
}

// commentData is the data projection of an issue_comment event.
type commentData struct {
	Action        string `json:"action"`
	Repo          string `json:"repo"`
	Number        int    `json:"number"`
	URL           string `json:"url"`
	IsPullRequest bool   `json:"is_pull_request"`
	whTrust
}

// normalizeIssueComment: subject github:o/r#<issue number>, for plain
// issues too (PRs and issues share one number space).
func normalizeIssueComment(c *whContext, body []byte) (sentinel.Event, error) {
	var p whIssueCommentEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	if p.Issue == nil || p.Issue.Number <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingIssueNumber)
	}
	ref := c.repo
	ref.Number = p.Issue.Number
	data := commentData{Action: c.action, Repo: ref.FullName(), Number: ref.Number, IsPullRequest: p.Issue.PullRequest != nil}
	var t whTrust
	if cm := p.Comment; cm != nil {
		data.URL = whCapText(cm.HTMLURL)
		t = c.trust(cm.User, cm.AuthorAssociation)
	} else {
		t = c.trust(nil, "")
	}
	data.whTrust = t
	summary := fmt.Sprintf("Comment %s on %s by %s", c.action, whTarget(ref), t.actorName())
	if c.action == "created" {
		summary = fmt.Sprintf("New comment on %s by %s", whTarget(ref), t.actorName())
	}
	return c.build(ref, nil, summary, false, data), nil
}

// prRef returns the subject ref for a list of PR numbers (the first one, the
// rest as extra subjects), or the repository when there are none.
func (c *whContext) prRef(numbers []int) (sentinel.GitHubRef, []int) {
	ref := c.repo
	if len(numbers) == 0 {
		return ref, nil
	}
	ref.Number = numbers[0]
	return ref, numbers[1:]
}

// target renders o/r#n, or o/r for a repository.
func whTarget(ref sentinel.GitHubRef) string {
	if ref.Number > 0 {
		return fmt.Sprintf("%s#%d", ref.FullName(), ref.Number)
	}
	return ref.FullName()
}

// whTargetBranch renders o/r#n, or "o/r (<branch>)" for a repository-level
// event with a branch.
func whTargetBranch(ref sentinel.GitHubRef, branch string) string {
	if ref.Number > 0 || branch == "" {
		return whTarget(ref)
	}
	return fmt.Sprintf("%s (%s)", ref.FullName(), whOneLine(branch, 100))
}

func whNonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	v := whOneLine(*s, 40)
	return &v
}

func whDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// LookupError is a WebhookLookup failure the delivery cannot do without
// (a fork PR's CI whose PR GitHub could not name): the caller answers
// "try again later" so GitHub's delivery fails and reconciliation asks for
// it again. Err is the lookup's error.
type LookupError struct{ Err error }

func (e *LookupError) Error() string {
	return "github webhook: look up the pull request: " + e.Err.Error()
}

func (e *LookupError) Unwrap() error { return e.Err }

// ciTarget is where a CI event goes and how its PR was found.
type ciTarget struct {
	ref   sentinel.GitHubRef
	extra []int
	// mergeQueue: the CI ran on a merge queue group of the PR.
	mergeQueue bool
	// byHead: the payload named no PR (a fork's), the PR was found by its
	// head commit.
	byHead bool
}

// ciTarget maps a CI event (check suite, workflow run or job, commit
// status) to pull requests, in order: the PRs the payload lists (of this
// repository), the PR a merge queue branch names, else the open PRs whose
// head is sha (a fork's PR: GitHub lists none), asked of the lookup. A
// lookup that fails retryably is a *LookupError; one GitHub refuses for
// good leaves the event at the repository.
func (c *whContext) ciTarget(numbers []int, branches []string, sha, headRepo string) (ciTarget, error) {
	if len(numbers) > 0 {
		ref, extra := c.prRef(numbers)
		return ciTarget{ref: ref, extra: extra}, nil
	}
	for _, b := range branches {
		if _, n, ok := MergeQueuePR(b); ok {
			ref := c.repo
			ref.Number = n
			return ciTarget{ref: ref, mergeQueue: true}, nil
		}
	}
	if c.lookup == nil || !ValidSHA(sha) {
		return ciTarget{ref: c.repo}, nil
	}
	prs, err := c.lookup.PullsForHead(c.ctx, c.repo, headRepo, sha)
	if err != nil {
		var pe *providers.Error
		if errors.As(err, &pe) && !pe.Retryable {
			return ciTarget{ref: c.repo}, nil
		}
		return ciTarget{}, &LookupError{Err: err}
	}
	if len(prs) == 0 {
		return ciTarget{ref: c.repo}, nil
	}
	ref, extra := c.prRef(prs)
	return ciTarget{ref: ref, extra: extra, byHead: true}, nil
}

// checkSuiteData is the data projection of a check_suite event, and of a
// commit status folded into the check suite rollup (Source "status").
type checkSuiteData struct {
	Action     string  `json:"action"`
	Conclusion *string `json:"conclusion"`
	Repo       string  `json:"repo"`
	Number     int     `json:"number,omitempty"`
	HeadBranch string  `json:"head_branch,omitempty"`
	HeadSHA    string  `json:"head_sha,omitempty"`
	MergeQueue bool    `json:"merge_queue,omitempty"`
	// Source "status": this rollup is one commit status (Checks names it).
	Source      string        `json:"source,omitempty"`
	Checks      []checkResult `json:"checks,omitempty"`
	State       string        `json:"state,omitempty"`
	Description string        `json:"description,omitempty"`
	TargetURL   string        `json:"target_url,omitempty"`
	whTrust
}

// checkResult is one check of a rollup (the shape local-gh uses).
type checkResult struct {
	Name       string `json:"name"`
	Conclusion string `json:"conclusion"`
}

// normalizeCheckSuite: subject the suite's first PR of this repository
// (every listed PR is in subjects), else the PR of its merge queue branch,
// else a fork PR found by its head, else the repository.
func normalizeCheckSuite(c *whContext, body []byte) (sentinel.Event, error) {
	var p whCheckSuiteEvent
	if err := json.Unmarshal(body, &p); err != nil || p.CheckSuite == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	cs := p.CheckSuite
	branch := whDeref(cs.HeadBranch)
	tg, err := c.ciTarget(whPullNumbers(cs.PullRequests, c.repoID), []string{branch}, cs.HeadSHA, "")
	if err != nil {
		return sentinel.Event{}, err
	}
	ref := tg.ref
	data := checkSuiteData{
		Action: c.action, Conclusion: whNonEmpty(cs.Conclusion), Repo: ref.FullName(), Number: ref.Number,
		HeadBranch: whCapText(branch), HeadSHA: whCapText(cs.HeadSHA), MergeQueue: tg.mergeQueue, whTrust: c.trust(nil, ""),
	}
	outcome := c.action
	if data.Conclusion != nil {
		outcome = *data.Conclusion
	}
	summary := fmt.Sprintf("Check suite %s for %s%s", outcome, whTargetBranch(ref, data.HeadBranch), queueNote(tg))
	return c.build(ref, tg.extra, summary, false, data), nil
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
	HeadRepo   string  `json:"head_repo,omitempty"`
	URL        string  `json:"url,omitempty"`
	MergeQueue bool    `json:"merge_queue,omitempty"`
	whTrust
}

// normalizeWorkflowRun: subject as for a check suite; a fork's run names
// its head repository, which the PR found by head must come from.
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
	headRepo := ""
	if run.HeadRepository != nil {
		headRepo = run.HeadRepository.FullName
	}
	branch := whDeref(run.HeadBranch)
	tg, err := c.ciTarget(whPullNumbers(run.PullRequests, c.repoID), []string{branch}, run.HeadSHA, headRepo)
	if err != nil {
		return sentinel.Event{}, err
	}
	if strings.EqualFold(headRepo, c.repo.FullName()) {
		headRepo = ""
	}
	ref := tg.ref
	data := workflowRunData{
		Action: c.action, Name: name, Conclusion: whNonEmpty(run.Conclusion), Repo: ref.FullName(), Number: ref.Number,
		HeadBranch: whCapText(branch), HeadSHA: whCapText(run.HeadSHA), HeadRepo: whCapText(headRepo), URL: whCapText(run.HTMLURL),
		MergeQueue: tg.mergeQueue, whTrust: c.trust(nil, ""),
	}
	outcome := c.action
	if data.Conclusion != nil {
		outcome = *data.Conclusion
	}
	summary := fmt.Sprintf("Workflow run %q %s for %s%s", name, outcome, whTargetBranch(ref, data.HeadBranch), queueNote(tg))
	return c.build(ref, tg.extra, summary, false, data), nil
}

// normalizeWorkflowJob: subject the PR of the job's head (a job names no
// PR: found as a fork's is), else the repository.
func normalizeWorkflowJob(c *whContext, body []byte) (sentinel.Event, error) {
	var p whWorkflowJobEvent
	if err := json.Unmarshal(body, &p); err != nil || p.WorkflowJob == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	j := p.WorkflowJob
	branch := whDeref(j.HeadBranch)
	tg, err := c.ciTarget(nil, []string{branch}, j.HeadSHA, "")
	if err != nil {
		return sentinel.Event{}, err
	}
	ref := tg.ref
	data, summary := jobData(c.action, ref.FullName(), ref.Number, j, whTargetBranch(ref, whCapText(branch)), c.trust(nil, ""))
	data.MergeQueue = tg.mergeQueue
	return c.build(ref, tg.extra, summary+queueNote(tg), false, data), nil
}

// normalizeStatus folds one commit status into the check suite rollup the
// spec defines (github.check_suite.completed, worst-of: error and failure
// are failure): a status that settled (success, failure, error) on a PR's
// head is one completed check of it, with its context, state, description
// and target URL; a pending status tells nothing yet and yields no event.
// Subject as for a check suite (the status names no PR: the merge queue
// branch among its branches, else the PRs of its commit).
func normalizeStatus(c *whContext, body []byte) ([]sentinel.Event, error) {
	var p whStatusEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, whErr(ReasonInvalidPayload)
	}
	var conclusion string
	switch p.State {
	case "success":
		conclusion = "success"
	case "failure", "error":
		conclusion = "failure"
	case "pending":
		return []sentinel.Event{}, nil
	default:
		return nil, whErr(ReasonInvalidPayload)
	}
	if p.Context == "" || !ValidSHA(p.SHA) {
		return nil, whErr(ReasonInvalidPayload)
	}
	var branches []string
	for _, b := range p.Branches {
		branches = append(branches, b.Name)
	}
	tg, err := c.ciTarget(nil, branches, p.SHA, "")
	if err != nil {
		return nil, err
	}
	ref := tg.ref
	context := whOneLine(p.Context, 200)
	data := checkSuiteData{
		Action: "completed", Conclusion: &conclusion, Repo: ref.FullName(), Number: ref.Number,
		HeadSHA: p.SHA, MergeQueue: tg.mergeQueue, Source: "status",
		Checks: []checkResult{{Name: context, Conclusion: conclusion}}, State: p.State,
		Description: whCapText(whDeref(p.Description)), TargetURL: whCapText(whDeref(p.TargetURL)), whTrust: c.trust(nil, ""),
	}
	summary := fmt.Sprintf("Check suite %s for %s (status %q: %s)%s", conclusion, whTarget(ref), context, p.State, queueNote(tg))
	return []sentinel.Event{c.buildType("github.check_suite.completed", ref, tg.extra, summary, false, data)}, nil
}

// queueNote marks a summary of CI that ran on a merge queue group.
func queueNote(tg ciTarget) string {
	if tg.mergeQueue {
		return " (merge queue)"
	}
	return ""
}

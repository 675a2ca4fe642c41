package github

import (
	"encoding/json"
	"fmt"

	"github.com/agentproto/sentinel"
)

// mergeGroupData is the data projection of a merge_group event. Reason is
// why a destroyed group went (merged, invalidated, dequeued); only
// "merged" means the PR was merged, and even then the PR's own
// pull_request.closed (merged) is the terminal event.
type mergeGroupData struct {
	Action  string `json:"action"`
	Reason  string `json:"reason,omitempty"`
	Merged  bool   `json:"merged"`
	Repo    string `json:"repo"`
	Number  int    `json:"number,omitempty"`
	HeadSHA string `json:"headSha,omitempty"`
	HeadRef string `json:"headRef,omitempty"`
	BaseRef string `json:"baseRef,omitempty"`
	BaseSHA string `json:"baseSha,omitempty"`
	whTrust
}

// normalizeMergeGroup: subject the PR the group's head ref names
// (gh-readonly-queue/<base>/pr-<N>-<sha>, when <base> is the queue's base
// branch), else the repository; never terminal. checks_requested is the
// queue's CI starting on the group; destroyed says the group is gone, and
// unless its reason is merged the PR was not merged (it left the queue or
// the group was rebuilt), so its sentinel keeps watching.
func normalizeMergeGroup(c *whContext, body []byte) (sentinel.Event, error) {
	var p whMergeGroupEvent
	if err := json.Unmarshal(body, &p); err != nil || p.MergeGroup == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	g := p.MergeGroup
	ref := c.repo
	if base, n, ok := MergeQueuePR(g.HeadRef); ok && base == branchName(g.BaseRef) {
		ref.Number = n
	}
	reason := whOneLine(p.Reason, 40)
	data := mergeGroupData{
		Action: c.action, Reason: reason, Merged: c.action == "destroyed" && reason == "merged",
		Repo: ref.FullName(), Number: ref.Number, HeadSHA: whOneLine(g.HeadSHA, 64), HeadRef: whCapText(g.HeadRef),
		BaseRef: whCapText(g.BaseRef), BaseSHA: whOneLine(g.BaseSHA, 64), whTrust: c.trust(nil, ""),
	}
	base := whOneLine(branchName(g.BaseRef), 100)
	var summary string
	switch {
	case c.action == "checks_requested":
		summary = fmt.Sprintf("Merge queue checks requested for %s (into %s)", whTarget(ref), base)
	case data.Merged:
		summary = fmt.Sprintf("Merge queue group of %s merged into %s", whTarget(ref), base)
	case reason != "":
		summary = fmt.Sprintf("Merge queue group of %s %s: not merged", whTarget(ref), reason)
	default:
		summary = fmt.Sprintf("Merge queue group of %s destroyed", whTarget(ref))
	}
	return c.build(ref, nil, summary, false, data), nil
}

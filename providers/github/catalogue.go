package github

import (
	"slices"

	"github.com/agentproto/sentinel"
)

// SpecHookEvents are the events the spec subscribes every sentinel hook to
// (pull_request, pull_request_review, check_suite, workflow_run,
// issue_comment). A hook is always subscribed to them, whatever its
// sentinels' types: pull_request carries the terminal event a sentinel's
// closure tracking reads even when its types filter it out.
func SpecHookEvents() []string {
	return []string{WebhookPullRequest, WebhookPullRequestReview, WebhookCheckSuite, WebhookWorkflowRun, WebhookIssueComment}
}

// WebhookTypes returns the event types a webhook event produces:
// github.<event>.<action> for each of its actions, and for a commit status
// github.check_suite.completed (statuses are folded into the check suite
// rollup). Nil for an unsupported event.
func WebhookTypes(event string) []string {
	shape, ok := whShapes[event]
	if !ok {
		return nil
	}
	if event == WebhookStatus {
		return []string{"github.check_suite.completed"}
	}
	out := make([]string, 0, len(shape.actions))
	for _, a := range shape.actions {
		out = append(out, "github."+event+"."+a)
	}
	return out
}

// HookEventsFor returns the webhook events a hook must be subscribed to
// for a sentinel whose clauses have the given type globs (each clause's
// types, or its provider's defaults when it has none): SpecHookEvents,
// plus every other event producing a type one of the globs matches. The
// result is in WebhookEvents order.
func HookEventsFor(globs []string) []string {
	need := map[string]bool{}
	for _, e := range SpecHookEvents() {
		need[e] = true
	}
	for _, e := range WebhookEvents() {
		if need[e] {
			continue
		}
		for _, t := range WebhookTypes(e) {
			if slices.ContainsFunc(globs, func(g string) bool { return sentinel.GlobMatch(g, t) }) {
				need[e] = true
				break
			}
		}
	}
	out := make([]string, 0, len(need))
	for _, e := range WebhookEvents() {
		if need[e] {
			out = append(out, e)
		}
	}
	return out
}

package github

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// ReasonEventMismatch refuses a delivery whose X-GitHub-Event header
// contradicts its payload: the header is not covered by the signature, so
// a captured body re-sent under another event name is refused rather than
// normalized as that event.
const ReasonEventMismatch = "event_payload_mismatch"

// WebhookEventID is the event id of a delivery: evt_<X-GitHub-Delivery>
// (the spec's id), so an operator finds the delivery in GitHub's own log
// from an inbox message and GitHub's redeliveries, which keep the GUID,
// keep the id.
func WebhookEventID(deliveryID string) string { return "evt_" + deliveryID }

// WebhookBodyKey is a delivery's second dedup key (sentinel.Event.DedupKey):
// evt_ and the first 128 bits of the SHA-256 of the raw (signed) body, in
// hex. The X-GitHub-Delivery header is not signed, so a captured body
// re-sent under fresh delivery ids gets new ids but keeps this key, and
// the seen window absorbs it. It has the form ids had before they were
// evt_<X-GitHub-Delivery>, so the windows written then still match.
func WebhookBodyKey(body []byte) string {
	sum := sha256.Sum256(body)
	return "evt_" + hex.EncodeToString(sum[:16])
}

// whMarkers are the top-level objects that say which event a payload is:
// GitHub's payloads carry the event name only in the unsigned header, but
// each event's body has its own object (a pull_request, a review, a
// comment on an issue, a commit status's commit...). Neighbours of the
// supported events are listed too (check_run) so that their bodies cannot
// pass for a supported one.
var whMarkers = []string{"pull_request", "review", "comment", "issue", "thread", "check_suite", "check_run",
	"workflow_run", "workflow_job", "merge_group", "commit"}

// whShape is what a supported event's payload must look like: its primary
// object, the other marker objects it may carry, and its known actions
// (nil: the event has no action, and its payload must have none).
type whShape struct {
	primary string
	also    []string
	actions []string
}

// whShapes are the supported events' shapes (GitHub's webhook reference).
var whShapes = map[string]whShape{
	WebhookPullRequest: {primary: "pull_request", actions: []string{
		"assigned", "auto_merge_disabled", "auto_merge_enabled", "closed", "converted_to_draft", "demilestoned",
		"dequeued", "edited", "enqueued", "labeled", "locked", "milestoned", "opened", "ready_for_review",
		"reopened", "review_request_removed", "review_requested", "synchronize", "unassigned", "unlabeled", "unlocked"}},
	WebhookPullRequestReview:        {primary: "review", also: []string{"pull_request"}, actions: []string{"dismissed", "edited", "submitted"}},
	WebhookIssueComment:             {primary: "comment", also: []string{"issue"}, actions: []string{"created", "deleted", "edited"}},
	WebhookCheckSuite:               {primary: "check_suite", actions: []string{"completed", "requested", "rerequested"}},
	WebhookWorkflowRun:              {primary: "workflow_run", actions: []string{"completed", "in_progress", "requested"}},
	WebhookWorkflowJob:              {primary: "workflow_job", actions: []string{"completed", "in_progress", "queued", "waiting"}},
	WebhookMergeGroup:               {primary: "merge_group", actions: []string{"checks_requested", "destroyed"}},
	WebhookPullRequestReviewComment: {primary: "comment", also: []string{"pull_request"}, actions: []string{"created", "deleted", "edited"}},
	WebhookPullRequestReviewThread:  {primary: "thread", also: []string{"pull_request"}, actions: []string{"resolved", "unresolved"}},
	WebhookStatus:                   {primary: "commit"},
}

// checkShape refuses (ReasonEventMismatch) a payload that is not what the
// event header says: the primary object missing or not an object, a
// marker object of another event present, or an action the event does not
// have (a missing action is left to the caller: missing_action). event is
// a supported event; body is valid JSON.
func checkShape(event, action string, body []byte) error {
	shape, ok := whShapes[event]
	if !ok {
		return whErr(ReasonEventMismatch)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return whErr(ReasonInvalidPayload)
	}
	if raw := top[shape.primary]; len(raw) == 0 || raw[0] != '{' {
		return whErr(ReasonEventMismatch)
	}
	for _, m := range whMarkers {
		if _, has := top[m]; has && m != shape.primary && !slices.Contains(shape.also, m) {
			return whErr(ReasonEventMismatch)
		}
	}
	switch {
	case shape.actions == nil && action != "":
		return whErr(ReasonEventMismatch)
	case shape.actions != nil && action != "" && !slices.Contains(shape.actions, action):
		return whErr(ReasonEventMismatch)
	}
	return nil
}

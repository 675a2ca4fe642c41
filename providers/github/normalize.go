package github

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
)

// GitHub webhook event names (the X-GitHub-Event header) the normalizer
// turns into SentinelEvents.
const (
	WebhookPullRequest              = "pull_request"
	WebhookPullRequestReview        = "pull_request_review"
	WebhookCheckSuite               = "check_suite"
	WebhookWorkflowRun              = "workflow_run"
	WebhookIssueComment             = "issue_comment"
	WebhookStatus                   = "status"
	WebhookWorkflowJob              = "workflow_job"
	WebhookMergeGroup               = "merge_group"
	WebhookPullRequestReviewComment = "pull_request_review_comment"
	WebhookPullRequestReviewThread  = "pull_request_review_thread"
	// WebhookPing is the event GitHub sends when a hook is created; it
	// carries nothing to deliver.
	WebhookPing = "ping"
)

// WebhookSource is the normalizer's default CloudEvents source.
const WebhookSource = "//agentproto.local/sentinel/github"

// WebhookEvents returns every event NormalizeWebhook supports, in a fixed
// order.
func WebhookEvents() []string {
	return []string{WebhookPullRequest, WebhookPullRequestReview, WebhookCheckSuite, WebhookWorkflowRun, WebhookIssueComment,
		WebhookStatus, WebhookWorkflowJob, WebhookMergeGroup, WebhookPullRequestReviewComment, WebhookPullRequestReviewThread}
}

// Reasons a webhook payload is refused. They are stable machine codes: the
// push ingress answers 400 with them.
const (
	ReasonInvalidJSON              = "invalid_json"
	ReasonInvalidPayload           = "invalid_payload"
	ReasonMissingRepository        = "missing_repository"
	ReasonMissingAction            = "missing_action"
	ReasonMissingPullRequestNumber = "missing_pull_request_number"
	ReasonMissingIssueNumber       = "missing_issue_number"
	ReasonMissingDelivery          = "missing_delivery_header"
	ReasonInvalidDelivery          = "invalid_delivery_header"
	reasonUnsupportedPrefix        = "unsupported_event:"
)

// ErrUnsupportedWebhookEvent is matched (errors.Is) by the error
// NormalizeWebhook returns for an event type it does not normalize. Such a
// delivery is acknowledged and dropped, not refused.
var ErrUnsupportedWebhookEvent = errors.New("unsupported github webhook event")

// WebhookError is a webhook payload the normalizer cannot turn into events.
// Reason is a stable code (ReasonMissingRepository, ...) or
// "unsupported_event:<name>" for an event type outside the supported set.
type WebhookError struct {
	Reason string
}

func (e *WebhookError) Error() string { return "github webhook: " + e.Reason }

// Is makes errors.Is(err, ErrUnsupportedWebhookEvent) true for an
// unsupported event type.
func (e *WebhookError) Is(target error) bool {
	return target == ErrUnsupportedWebhookEvent && strings.HasPrefix(e.Reason, reasonUnsupportedPrefix)
}

func whErr(reason string) error { return &WebhookError{Reason: reason} }

// WebhookReason returns the reason code of a normalizer error, or "" when
// err is not a *WebhookError.
func WebhookReason(err error) string {
	var we *WebhookError
	if errors.As(err, &we) {
		return we.Reason
	}
	return ""
}

var (
	// actions are GitHub's lower-case snake words; anything else is refused
	// so the event type stays a clean dotted name.
	whActionRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	// delivery ids are GUIDs; they become event ids and Nats-Msg-Id values.
	whDeliveryRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$`)
)

// ValidDeliveryID reports whether id can serve as an X-GitHub-Delivery value
// (a GUID in practice; at most 200 characters of [A-Za-z0-9_.:-]).
func ValidDeliveryID(id string) bool { return whDeliveryRe.MatchString(id) }

// WebhookOptions are the optional inputs of NormalizeWebhookWith.
type WebhookOptions struct {
	// Source is the CloudEvents source (WebhookSource when empty).
	Source string
	// Now is the receive time, the events' time.
	Now time.Time
	// Lookup answers what a payload does not say (a fork PR's number, a
	// review's inline comments); nil asks nothing: such events stay at
	// the repository and reviews carry no comments.
	Lookup WebhookLookup
}

// NormalizeWebhook is NormalizeWebhookWith without lookups.
func NormalizeWebhook(event, deliveryID string, body []byte, source string, now time.Time) ([]sentinel.Event, error) {
	return NormalizeWebhookWith(context.Background(), event, deliveryID, body, WebhookOptions{Source: source, Now: now})
}

// NormalizeWebhookWith turns one GitHub webhook delivery into
// SentinelEvents (the events docs/api.md lists, "GitHub event types"):
// event is the X-GitHub-Event header, deliveryID the X-GitHub-Delivery
// header (required and validated), body the raw JSON payload.
//
// The event id is the spec's evt_<X-GitHub-Delivery> (WebhookEventID).
// Neither header is covered by the signature, so neither is trusted alone:
// every event also carries WebhookBodyKey(body) as its DedupKey (the same
// body under a new delivery id is still a duplicate in the seen window),
// and a payload whose shape contradicts the event header (the event's own
// object missing, another event's object present, an action the event
// does not have) is refused with ReasonEventMismatch.
//
// An event type outside WebhookEvents yields an error matching
// ErrUnsupportedWebhookEvent; a malformed payload yields a *WebhookError
// whose Reason names the defect; a lookup that failed is returned as it
// is (wrapped), so the caller can answer "try again". A delivery with
// nothing to tell (a pending commit status) yields no events and no
// error. Every event's data carries the trust facts actor (who caused the
// event: the sender), actorIsBot, actorIsGhost, and the author,
// authorIsBot, authorIsGhost and authorAssociation of the nested object
// (PR, review or comment) when it has one.
func NormalizeWebhookWith(ctx context.Context, event, deliveryID string, body []byte, opts WebhookOptions) ([]sentinel.Event, error) {
	if deliveryID == "" {
		return nil, whErr(ReasonMissingDelivery)
	}
	if !ValidDeliveryID(deliveryID) {
		return nil, whErr(ReasonInvalidDelivery)
	}
	if !json.Valid(body) {
		return nil, whErr(ReasonInvalidJSON)
	}
	source := opts.Source
	if source == "" {
		source = WebhookSource
	}
	norm, ok := whNormalizers[event]
	if !ok {
		return nil, whErr(reasonUnsupportedPrefix + whOneLine(event, 64))
	}
	var common whCommon
	if err := json.Unmarshal(body, &common); err != nil {
		return nil, whErr(ReasonInvalidPayload)
	}
	ref, err := common.repo()
	if err != nil {
		return nil, err
	}
	if common.Action != "" && !whActionRe.MatchString(common.Action) {
		return nil, whErr(ReasonInvalidPayload)
	}
	if err := checkShape(event, common.Action, body); err != nil {
		return nil, err
	}
	if whShapes[event].actions != nil && common.Action == "" {
		return nil, whErr(ReasonMissingAction)
	}
	c := &whContext{
		ctx:    ctx,
		lookup: opts.Lookup,
		id:     WebhookEventID(deliveryID),
		key:    WebhookBodyKey(body),
		source: source,
		event:  event,
		action: common.Action,
		repo:   ref,
		repoID: common.Repository.ID,
		now:    opts.Now,
		sender: common.Sender,
	}
	evs, err := norm(c, body)
	if err != nil {
		return nil, err
	}
	return evs, nil
}

// whNormalizers maps each supported event to its normalizer.
var whNormalizers = map[string]func(*whContext, []byte) ([]sentinel.Event, error){
	WebhookPullRequest:              one(normalizePullRequest),
	WebhookPullRequestReview:        one(normalizePullRequestReview),
	WebhookCheckSuite:               one(normalizeCheckSuite),
	WebhookWorkflowRun:              one(normalizeWorkflowRun),
	WebhookIssueComment:             one(normalizeIssueComment),
	WebhookStatus:                   normalizeStatus,
	WebhookWorkflowJob:              one(normalizeWorkflowJob),
	WebhookMergeGroup:               one(normalizeMergeGroup),
	WebhookPullRequestReviewComment: one(normalizeReviewComment),
	WebhookPullRequestReviewThread:  one(normalizeReviewThread),
}

// one adapts a normalizer of exactly one event.
func one(f func(*whContext, []byte) (sentinel.Event, error)) func(*whContext, []byte) ([]sentinel.Event, error) {
	return func(c *whContext, body []byte) ([]sentinel.Event, error) {
		ev, err := f(c, body)
		if err != nil {
			return nil, err
		}
		return []sentinel.Event{ev}, nil
	}
}

// whContext carries what every per-event normalizer needs.
type whContext struct {
	ctx                            context.Context
	lookup                         WebhookLookup
	id, key, source, event, action string
	repo                           sentinel.GitHubRef
	repoID                         int64
	now                            time.Time
	sender                         *whUser
}

// typ returns github.<event>.<action>.
func (c *whContext) typ() string { return "github." + c.event + "." + c.action }

// build assembles the event for ref (a PR when ref.Number > 0) with extra
// PR subjects inserted after the first.
func (c *whContext) build(ref sentinel.GitHubRef, extra []int, summary string, terminal bool, data any) sentinel.Event {
	return c.buildType(c.typ(), ref, extra, summary, terminal, data)
}

// buildType is build for an event of another type than the delivery's
// own (a commit status folded into the check suite rollup).
func (c *whContext) buildType(typ string, ref sentinel.GitHubRef, extra []int, summary string, terminal bool, data any) sentinel.Event {
	ev := sentinel.NewEvent(c.id, c.source, typ, ref.Subject(), c.subjects(ref, extra), c.now, whOneLine(summary, 300), terminal, data)
	ev.DedupKey = c.key
	return ev
}

// subjects is ref's hierarchy with the extra PRs after the first.
func (c *whContext) subjects(ref sentinel.GitHubRef, extra []int) []string {
	subjects := ref.Subjects()
	if len(extra) == 0 {
		return subjects
	}
	more := make([]string, 0, len(subjects)+len(extra))
	more = append(more, subjects[0])
	for _, n := range extra {
		more = append(more, sentinel.GitHubRef{Owner: ref.Owner, Repo: ref.Repo, Number: n}.Subject())
	}
	return append(more, subjects[1:]...)
}

// trust returns the trust facts: the sender as the actor, and the nested
// object's author and association (nil when the object has none). The
// ghost account (a deleted user) is labelled and reported with the
// association NONE.
func (c *whContext) trust(author *whUser, association string) whTrust {
	t := whTrust{}
	actor := c.sender
	if actor == nil || actor.Login == "" {
		actor = author
	}
	if actor != nil {
		t.Actor = whOneLine(actor.Login, 100)
		t.ActorIsBot = actor.isBot()
		t.ActorIsGhost = actor.isGhost()
	}
	if author != nil && author.Login != "" {
		t.Author = whOneLine(author.Login, 100)
		t.AuthorIsBot = author.isBot()
		t.AuthorIsGhost = author.isGhost()
		association = TrustedAssociation(author.Login, association)
	}
	if association != "" {
		a := whOneLine(association, 40)
		t.AuthorAssociation = &a
	}
	return t
}

// actorName is the actor for summaries, "unknown" when there is none.
func (t whTrust) actorName() string {
	if t.Actor == "" {
		return "unknown"
	}
	return t.Actor
}

// whTrust is the trust projection every event's data carries so a harness
// can fence untrusted text: Actor is who caused the event (the sender),
// ActorIsBot whether that is a bot account (an App's name[bot], Copilot's
// reviewer), ActorIsGhost whether it is GitHub's stand-in for a deleted
// user; Author the login of whoever wrote the nested object (PR, review,
// comment), AuthorIsBot and AuthorIsGhost the same labels for it, and
// AuthorAssociation that author's relation to the repository (OWNER,
// MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER,
// MANNEQUIN, NONE; NONE for the ghost), null when the event has no
// authored object.
type whTrust struct {
	Actor             string  `json:"actor"`
	ActorIsBot        bool    `json:"actorIsBot"`
	ActorIsGhost      bool    `json:"actorIsGhost"`
	Author            string  `json:"author,omitempty"`
	AuthorIsBot       bool    `json:"authorIsBot,omitempty"`
	AuthorIsGhost     bool    `json:"authorIsGhost,omitempty"`
	AuthorAssociation *string `json:"authorAssociation"`
}

// whOneLine replaces control characters with spaces and caps s at limit runes,
// so attacker-chosen text cannot break a one-line summary.
func whOneLine(s string, limit int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == limit {
			b.WriteString("…")
			break
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// whCapText bounds free text kept in data (titles, urls, branch names).
func whCapText(s string) string { return whOneLine(s, 1024) }

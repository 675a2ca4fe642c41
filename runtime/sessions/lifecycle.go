package sessions

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentproto/sentinel"
)

// LifecycleEvent is one session lifecycle event on the lifecycle stream.
type LifecycleEvent struct {
	// ID is the event's id (lc_<session>_<n>, its Nats-Msg-Id): one
	// event published twice (outbox.go) is stored once.
	ID            string `json:"id,omitempty"`
	Kind          string `json:"kind"`
	SessionID     string `json:"sessionId"`
	Label         string `json:"label,omitempty"`
	AwaitingInput bool   `json:"awaitingInput,omitempty"`
	Empty         bool   `json:"empty,omitempty"`
	// Detail is the excerpt source: the turn's output tail or question, the
	// crash error, or the PR title.
	Detail string `json:"detail,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Key identifies a PR activity (its URL) so PR events of different PRs
	// never collapse.
	Key string `json:"key,omitempty"`
	Ts  string `json:"ts"`
}

// maxOutput bounds a stored excerpt (the digest keeps 300 characters).
const maxOutput = 4000

// Report records a lifecycle report (turn-end, awaiting-input, exited,
// crashed), registering an unknown session implicitly, and publishes it.
func (r *Registry) Report(ctx context.Context, id string, in sentinel.SessionReport) error {
	switch in.Kind {
	case sentinel.FollowTurnEnd, sentinel.FollowAwaitingInput, sentinel.FollowExited, sentinel.FollowCrashed:
	default:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "kind %q must be one of turn-end, awaiting-input, exited, crashed", in.Kind)
	}
	if len(in.Reason) > 64 {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "reason is longer than 64 characters")
	}
	excerpt := tail(strings.TrimSpace(in.Excerpt), maxOutput)
	s, _, err := r.mutate(ctx, id, true, func(s *Session, _ bool) error {
		publish := true
		if s.Forgotten {
			*s = Session{Session: sentinel.Session{ID: id, CreatedTs: r.now().UnixMilli(), Sentinel: true}}
		}
		wasEnded := s.Status == sentinel.SessionEnded
		s.LastSeenTs = r.now().UnixMilli()
		switch in.Kind {
		case sentinel.FollowTurnEnd:
			s.Status = sentinel.SessionIdle
			if in.AwaitingInput {
				s.Status = sentinel.SessionAwaitingInput
			}
			if excerpt != "" && !in.Empty {
				s.LastOutput = excerpt
			}
			s.EndedReason = ""
		case sentinel.FollowAwaitingInput:
			s.Status = sentinel.SessionAwaitingInput
			s.EndedReason = ""
		case sentinel.FollowExited:
			publish = !wasEnded
			s.Status = sentinel.SessionEnded
			s.EndedTs = r.now().UnixMilli()
			s.EndedReason = in.Reason
			if s.EndedReason == "" {
				s.EndedReason = ReasonExited
			}
			if excerpt != "" {
				s.LastOutput = excerpt
			}
		case sentinel.FollowCrashed:
			publish = !wasEnded || s.EndedReason != ReasonCrashed
			s.Status = sentinel.SessionEnded
			s.EndedTs = r.now().UnixMilli()
			s.EndedReason = ReasonCrashed
			s.LastError = firstNonEmpty(in.Reason, excerpt, "crashed")
		}
		if !publish {
			return nil
		}
		ev := LifecycleEvent{Kind: in.Kind, SessionID: id, Label: s.Label, AwaitingInput: in.AwaitingInput, Empty: in.Empty, Reason: in.Reason}
		switch in.Kind {
		case sentinel.FollowTurnEnd, sentinel.FollowAwaitingInput:
			ev.Detail = excerpt
		case sentinel.FollowExited:
			ev.Reason = s.EndedReason
			ev.Detail = firstNonEmpty(excerpt, s.LastOutput)
		case sentinel.FollowCrashed:
			ev.Reason = ReasonCrashed
			ev.Detail = s.LastError
		}
		r.enqueue(s, ev)
		return nil
	})
	if err != nil {
		return err
	}
	r.flush(ctx, id, s.Pending)
	return nil
}

// PR states.
const (
	PROpen   = "open"
	PRMerged = "merged"
	PRClosed = "closed"
)

// CanonicalPRURL returns https://github.com/<owner>/<repo>/pull/<n> for a
// PR URL, or invalid_pr_url.
func CanonicalPRURL(raw string) (string, sentinel.GitHubRef, error) {
	ref, err := sentinel.ParsePRURL(raw)
	if err != nil {
		return "", ref, err
	}
	return fmt.Sprintf("https://github.com/%s/pull/%d", ref.FullName(), ref.Number), ref, nil
}

// RecordPR records PR activity of a session (registering an unknown
// session implicitly): a new PR publishes pr-opened (unless it is already
// closed or merged), a PR reaching merged publishes pr-merged once, and a
// new open PR triggers the PR hook (auto-link).
func (r *Registry) RecordPR(ctx context.Context, id, rawURL, state, title string) error {
	url, _, err := CanonicalPRURL(rawURL)
	if err != nil {
		return err
	}
	switch state {
	case PROpen, PRMerged, PRClosed:
	case "":
		state = PROpen
	default:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "state %q must be one of open, merged, closed", state)
	}
	if len(title) > 1024 {
		title = title[:1024]
	}
	var isNew bool
	var prev string
	var pr sentinel.SessionPR
	s, _, err := r.mutate(ctx, id, true, func(s *Session, _ bool) error {
		if s.Forgotten {
			*s = Session{Session: sentinel.Session{ID: id, CreatedTs: r.now().UnixMilli(), Sentinel: true, Status: sentinel.SessionRunning}}
		}
		p := s.PR(url)
		isNew = p == nil
		prev = ""
		if p == nil {
			s.PRs = append(s.PRs, sentinel.SessionPR{URL: url})
			p = &s.PRs[len(s.PRs)-1]
		} else {
			prev = p.State
		}
		if prev == state && (title == "" || title == p.Title) {
			return errSkip
		}
		p.State = state
		if title != "" {
			p.Title = title
		}
		p.Ts = sentinel.FormatTime(r.now())
		pr = *p
		switch {
		case isNew && state == PROpen:
			r.enqueue(s, LifecycleEvent{Kind: sentinel.FollowPROpened, SessionID: id, Label: s.Label, Detail: pr.Title, Key: url})
		case state == PRMerged && prev != PRMerged:
			r.enqueue(s, LifecycleEvent{Kind: sentinel.FollowPRMerged, SessionID: id, Label: s.Label, Detail: pr.Title, Key: url})
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.flush(ctx, id, s.Pending)
	if pr.URL == "" {
		return nil // nothing changed
	}
	if isNew && state == PROpen && r.onPR != nil {
		r.onPR(ctx, s, pr, isNew)
	}
	return nil
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// tail keeps the last n bytes of s on a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for len(s) > 0 && s[0]&0xC0 == 0x80 {
		s = s[1:]
	}
	return s
}

package chaos

import (
	"fmt"
	"sort"
	"time"
)

// Outcome is what the sender knows of one send.
type Outcome string

// The send outcomes.
const (
	// Accepted: a node answered 200 (the event is stored), or, for a poll
	// event, it was written to the feed.
	Accepted Outcome = "accepted"
	// Unknown: an answer was lost (a timeout, a connection dropped after
	// the request was written, a 500) and no node answered 200: the event
	// may or may not be stored.
	Unknown Outcome = "unknown"
	// Refused: every answer said nothing was performed (503, a refused
	// connection, another 4xx): the event must not appear.
	Refused Outcome = "refused"
)

// Send is one event the workload sent, as the sender saw it.
type Send struct {
	ID       string  `json:"id"`
	Sentinel string  `json:"sentinel"`
	Session  string  `json:"session"`
	Path     string  `json:"path"` // "push" or "poll"
	Index    int     `json:"index"`
	Outcome  Outcome `json:"outcome"`
	// Sent is when the first attempt started; Done when the outcome was
	// known.
	Sent time.Time `json:"sent"`
	Done time.Time `json:"done"`
	// Attempts is the requests sent; Last the last answer other than 200.
	Attempts int    `json:"attempts,omitempty"`
	Last     string `json:"last,omitempty"`
}

// Message is one inbox message as read at the end: its session and the id
// of the event it carries ("" when it carries none).
type Message struct {
	Session string `json:"session"`
	Seq     uint64 `json:"seq"`
	EventID string `json:"eventId"`
}

// Class is the oracle's verdict on one event.
type Class string

// The classes, after Jepsen's queue checker.
const (
	// OK: accepted and in its inbox exactly once.
	OK Class = "ok"
	// Lost: accepted and in no inbox.
	Lost Class = "lost"
	// Duplicated: in an inbox more than once (whatever the outcome).
	Duplicated Class = "duplicated"
	// Unexpected: an inbox message no send explains (an unknown id, a
	// refused send that appeared, an event in another session's inbox).
	Unexpected Class = "unexpected"
	// IndeterminatePresent and IndeterminateAbsent: an unknown outcome,
	// delivered once or not at all (both fine).
	IndeterminatePresent Class = "indeterminate-present"
	IndeterminateAbsent  Class = "indeterminate-absent"
	// RefusedAbsent: refused and absent (fine).
	RefusedAbsent Class = "refused-absent"
	// Reordered: an accepted event delivered after an accepted event of
	// the same sentinel sent later (among sends made one after another,
	// each awaited).
	Reordered Class = "reordered"
)

// Counts are the oracle's totals.
type Counts struct {
	Sent                 int `json:"sent"`
	Accepted             int `json:"accepted"`
	OK                   int `json:"ok"`
	Lost                 int `json:"lost"`
	Duplicated           int `json:"duplicated"`
	Unexpected           int `json:"unexpected"`
	IndeterminatePresent int `json:"indeterminatePresent"`
	IndeterminateAbsent  int `json:"indeterminateAbsent"`
	RefusedAbsent        int `json:"refusedAbsent"`
	Reordered            int `json:"reordered"`
	Messages             int `json:"messages"`
}

// Finding is one event in a failing class, for the report.
type Finding struct {
	Class   Class  `json:"class"`
	EventID string `json:"eventId"`
	Detail  string `json:"detail"`
}

// Verdict is the oracle's answer.
type Verdict struct {
	Counts Counts `json:"counts"`
	// Findings are the events of the failing classes (lost, duplicated,
	// unexpected, reordered), at most MaxFindings.
	Findings []Finding `json:"findings,omitempty"`
	// Valid is no lost, duplicated, unexpected or reordered event.
	Valid bool `json:"valid"`
}

// MaxFindings caps the findings a verdict lists (the counts are whole).
const MaxFindings = 50

// Check classifies every send against the inbox messages read at the end.
// Order is checked per sentinel among its accepted sends, by Index: the
// first delivery of each must come in increasing Index.
func Check(sends []Send, msgs []Message) Verdict {
	var v Verdict
	add := func(c Class, id, format string, args ...any) {
		if len(v.Findings) < MaxFindings {
			v.Findings = append(v.Findings, Finding{Class: c, EventID: id, Detail: fmt.Sprintf(format, args...)})
		}
	}
	byID := make(map[string]*Send, len(sends))
	for i := range sends {
		byID[sends[i].ID] = &sends[i]
	}
	count := map[string]int{}
	// firsts are, per sentinel, the accepted sends in the order of their
	// first delivery.
	firsts := map[string][]*Send{}
	v.Counts.Messages = len(msgs)
	ordered := append([]Message(nil), msgs...)
	sort.SliceStable(ordered, func(i, j int) bool {
		if ordered[i].Session != ordered[j].Session {
			return ordered[i].Session < ordered[j].Session
		}
		return ordered[i].Seq < ordered[j].Seq
	})
	for _, m := range ordered {
		s := byID[m.EventID]
		switch {
		case s == nil:
			v.Counts.Unexpected++
			add(Unexpected, m.EventID, "message %d in %s: no send has this event id", m.Seq, m.Session)
			continue
		case s.Session != m.Session:
			v.Counts.Unexpected++
			add(Unexpected, m.EventID, "message %d in %s: the event was sent to %s", m.Seq, m.Session, s.Session)
			continue
		}
		count[m.EventID]++
		if count[m.EventID] == 1 && s.Outcome == Accepted {
			firsts[s.Sentinel] = append(firsts[s.Sentinel], s)
		}
	}
	for i := range sends {
		s := &sends[i]
		v.Counts.Sent++
		c := count[s.ID]
		if s.Outcome == Accepted {
			v.Counts.Accepted++
		}
		switch {
		case c > 1:
			v.Counts.Duplicated++
			add(Duplicated, s.ID, "%s %s of %s (%s): %d messages", s.Path, s.Outcome, s.Sentinel, s.Session, c)
		case s.Outcome == Accepted && c == 1:
			v.Counts.OK++
		case s.Outcome == Accepted:
			v.Counts.Lost++
			add(Lost, s.ID, "%s of %s (%s) accepted at %s after %d attempts, in no inbox", s.Path, s.Sentinel, s.Session,
				s.Done.UTC().Format(time.RFC3339Nano), s.Attempts)
		case s.Outcome == Unknown && c == 1:
			v.Counts.IndeterminatePresent++
		case s.Outcome == Unknown:
			v.Counts.IndeterminateAbsent++
		case c == 1:
			v.Counts.Unexpected++
			add(Unexpected, s.ID, "%s of %s refused (%s), yet delivered", s.Path, s.Sentinel, s.Last)
		default:
			v.Counts.RefusedAbsent++
		}
	}
	sentinels := make([]string, 0, len(firsts))
	for k := range firsts {
		sentinels = append(sentinels, k)
	}
	sort.Strings(sentinels)
	for _, k := range sentinels {
		top := -1
		var topID string
		for _, s := range firsts[k] {
			if s.Index < top {
				v.Counts.Reordered++
				add(Reordered, s.ID, "%s send %d of %s delivered after its send %d (%s)", s.Path, s.Index, k, top, topID)
				continue
			}
			top, topID = s.Index, s.ID
		}
	}
	v.Valid = v.Counts.Lost == 0 && v.Counts.Duplicated == 0 && v.Counts.Unexpected == 0 && v.Counts.Reordered == 0
	return v
}

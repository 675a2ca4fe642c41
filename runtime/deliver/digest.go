package deliver

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// itemOf projects a held event: its identity and summary, and the facts of
// its data the state line reads (a check's name and conclusion, a rollup's
// checks, the head commit, a review's state and author).
func itemOf(ev *sentinel.Event, u sentinel.Urgency) batchItem {
	it := batchItem{ID: ev.ID, Type: ev.Type, Subject: ev.Subject, Summary: clipText(ev.Summary, 1024), Time: ev.Time, Urgency: u, Terminal: ev.Terminal}
	var d struct {
		Name       string      `json:"name"`
		Conclusion *string     `json:"conclusion"`
		Checks     []checkFact `json:"checks"`
		HeadSHA    string      `json:"head_sha"`
		HeadSha2   string      `json:"headSha"`
		CommitID   string      `json:"commitId"`
		State      *string     `json:"state"`
		Actor      string      `json:"actor"`
		Author     string      `json:"author"`
	}
	if len(ev.Data) == 0 || json.Unmarshal(ev.Data, &d) != nil {
		return it
	}
	it.SHA = clipText(firstOf(d.HeadSHA, d.HeadSha2, d.CommitID), 64)
	switch {
	case isCI(ev.Type):
		if len(d.Checks) > 0 {
			for _, c := range d.Checks[:min(len(d.Checks), 50)] {
				it.Checks = append(it.Checks, checkFact{Name: clipText(c.Name, 80), Conclusion: clipText(c.Conclusion, 32)})
			}
			break
		}
		it.Check = clipText(firstOf(d.Name, strings.TrimPrefix(ev.Type, "github.")), 80)
		if d.Conclusion != nil {
			it.Conclusion = clipText(*d.Conclusion, 32)
		}
	case strings.Contains(ev.Type, "pull_request_review.") && d.State != nil:
		it.Review = clipText(*d.State, 32)
		it.Reviewer = clipText(firstOf(d.Actor, d.Author), 64)
	}
	return it
}

func isCI(typ string) bool {
	for _, k := range []string{".check_run.", ".check_suite.", ".workflow_run.", ".workflow_job.", ".status"} {
		if strings.Contains(typ, k) {
			return true
		}
	}
	return false
}

func firstOf(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// StateLine says a window's subject's new state in a line: "CI on 3f2a1c:
// 12 passed, 2 failed: lint, e2e; review: changes requested by alice"
// (the latest conclusion of each check, the latest review), else the last
// event's summary. Names come from the provider's events: cleaned to one
// line each.
func stateLine(items []batchItem) string {
	var order []string
	concl := map[string]string{}
	sha := ""
	seenCheck := func(name, c string) {
		if _, ok := concl[name]; !ok {
			order = append(order, name)
		}
		concl[name] = strings.ToLower(c)
	}
	var review, reviewer string
	for _, it := range items {
		if it.SHA != "" && (it.Check != "" || len(it.Checks) > 0) {
			sha = it.SHA
		}
		if it.Check != "" {
			seenCheck(it.Check, it.Conclusion)
		}
		for _, c := range it.Checks {
			seenCheck(c.Name, c.Conclusion)
		}
		if it.Review != "" {
			review, reviewer = it.Review, it.Reviewer
		}
	}
	var parts []string
	if len(order) > 0 {
		passed, pending := 0, 0
		var failed []string
		for _, n := range order {
			switch concl[n] {
			case "success", "neutral", "skipped":
				passed++
			case "failure", "timed_out", "cancelled", "action_required", "startup_failure", "error", "stale":
				failed = append(failed, oneLine(n))
			default:
				pending++
			}
		}
		head := "CI"
		if sha != "" {
			head += " on " + oneLine(sha[:min(len(sha), 7)])
		}
		s := head + ": " + strconv.Itoa(passed) + " passed"
		if len(failed) > 0 {
			names := failed
			more := ""
			if len(names) > 10 {
				more = ", \u2026 " + strconv.Itoa(len(names)-10) + " more"
				names = names[:10]
			}
			s += ", " + strconv.Itoa(len(failed)) + " failed: " + strings.Join(names, ", ") + more
		}
		if pending > 0 {
			s += ", " + strconv.Itoa(pending) + " pending"
		}
		parts = append(parts, s)
	}
	if review != "" {
		s := "review: " + strings.ReplaceAll(strings.ToLower(oneLine(review)), "_", " ")
		if reviewer != "" {
			s += " by " + oneLine(reviewer)
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 && len(items) > 0 {
		parts = append(parts, "last: "+oneLine(items[len(items)-1].Summary))
	}
	return strings.Join(parts, "; ")
}

// DigestMessage is the inbox message of a sealed window: from system, kind
// notice, the highest urgency among its events, text "[<scheme>] <n>
// events on <subject>: <state line>", data {digest, subject, state,
// count, events (the oldest dropped to fit 16 KiB, counted in omitted)}.
func DigestMessage(st *batchState, ts string) sentinel.Message {
	urg := sentinel.UrgencyFYI
	for _, it := range st.Items {
		if it.Urgency.Rank() > urg.Rank() {
			urg = it.Urgency
		}
	}
	scheme, _, _ := strings.Cut(st.Subject, ":")
	if scheme == "" || scheme == st.Subject {
		scheme = st.Provider
	}
	n := len(st.Items)
	word := "events"
	if n == 1 {
		word = "event"
	}
	state := stateLine(st.Items)
	text := "[" + oneLine(scheme) + "] " + strconv.Itoa(n) + " " + word + " on " + oneLine(st.Subject) + ": " + state
	return sentinel.Message{
		ID:            DigestID(st.To, st.SentinelID, st.BatchID),
		Ts:            ts,
		To:            st.To,
		From:          sentinel.MessageFrom{Relation: inbox.RelationSystem},
		Kind:          inbox.KindNotice,
		Urgency:       urg,
		CorrelationID: "sentinel:" + st.Subject,
		Text:          clipText(text, 4096),
		Data:          digestData(st, state),
		Source:        "sentinel",
		Origin:        st.SentinelID,
	}
}

func digestData(st *batchState, state string) json.RawMessage {
	items := st.Items
	omitted := 0
	for {
		raw, err := json.Marshal(map[string]any{
			"digest": true, "sentinelId": st.SentinelID, "subject": st.Subject, "state": state,
			"count": len(st.Items), "omitted": omitted, "events": items,
		})
		if err == nil && (len(raw) <= inbox.MaxDataBytes || len(items) == 0) {
			return raw
		}
		drop := max(1, len(items)/4)
		items, omitted = items[drop:], omitted+drop
	}
}

// oneLine makes provider text safe inside the digest's line: control
// characters and line breaks become spaces, whitespace collapses.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

package sentinel

// Decision is one decision-journal entry: what the pipeline did with one
// event for one sentinel (docs/api.md, "Decision journal"), as stored on
// the journal stream and as every surface shows it. It keeps the event's
// identity and summary (the events stream forgets an event once acked: the
// journal is its history), never its data.
type Decision struct {
	// Seq is the journal stream sequence (set when read).
	Seq        uint64   `json:"seq,omitempty"`
	EventID    string   `json:"eventId"`
	SentinelID string   `json:"sentinelId"`
	Subject    string   `json:"subject"`
	Subjects   []string `json:"subjects,omitempty"`
	Type       string   `json:"type"`
	// Time is the event's own time; Ts the decision's.
	Time       string `json:"time,omitempty"`
	Summary    string `json:"summary,omitempty"`
	Source     string `json:"source,omitempty"`
	Terminal   bool   `json:"terminal,omitempty"`
	SelfCaused bool   `json:"selfCaused,omitempty"`
	Provider   string `json:"provider,omitempty"`
	Ts         string `json:"ts"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
	// Session and MessageID name where a delivered (or forwarded) event went.
	Session   string       `json:"session,omitempty"`
	MessageID string       `json:"messageId,omitempty"`
	Clauses   []ClauseMiss `json:"clauses,omitempty"`
	// Attempt is the delivery attempt of a retrying or undeliverable event.
	Attempt int `json:"attempt,omitempty"`
	// Node is the node that decided.
	Node string `json:"node,omitempty"`
}

// Event rebuilds the envelope fields a dry run matches on (no data).
func (d Decision) Event() *Event {
	return &Event{ID: d.EventID, Subject: d.Subject, Subjects: d.Subjects, Type: d.Type,
		Time: d.Time, Summary: d.Summary, Source: d.Source, Terminal: d.Terminal, SelfCaused: d.SelfCaused}
}

// DecisionPage is a page of one sentinel's decisions, oldest first: the
// answer of GET /sentinels/{id}/decisions (with ok). Next is the cursor of
// the next page (pass it as after): the sequence of the last decision
// returned, or the after given when the page is empty.
type DecisionPage struct {
	Decisions []Decision `json:"decisions"`
	Next      uint64     `json:"next"`
}

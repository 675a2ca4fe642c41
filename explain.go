package sentinel

// What failed in a clause that did not match an event.
const (
	MissSubject = "subject"
	MissType    = "type"
)

// ClauseMiss says why one match clause did not match an event: its subject
// matched none of the event's subjects (Failed "subject"), or it did and
// none of its type globs (or the provider's defaults) matched the event's
// type (Failed "type").
type ClauseMiss struct {
	Clause  int      `json:"clause"`
	Subject string   `json:"subject"`
	Failed  string   `json:"failed"`
	Types   []string `json:"types,omitempty"`
}

// Misses explains a spec that does not match an event, one entry per
// clause in order; it is empty when the spec matches. It applies the same
// rules as Matches.
func (s *Spec) Misses(ev *Event, defaults DefaultTypesFunc) []ClauseMiss {
	if s.Matches(ev, defaults) {
		return nil
	}
	subjects := ev.AllSubjects()
	out := make([]ClauseMiss, 0, len(s.Match))
	for i, c := range s.Match {
		m := ClauseMiss{Clause: i, Subject: c.Subject, Failed: MissSubject}
		if SubjectMatches(c.Subject, subjects) {
			m.Failed = MissType
			m.Types = c.Types
			if len(m.Types) == 0 && defaults != nil {
				m.Types = defaults(c.Subject)
			}
		}
		out = append(out, m)
	}
	return out
}

// Error codes of the decision journal, explain, dry runs and replays.
const (
	// CodeEventNotFound (errors.go) also answers an event id the journal
	// holds no decision about.
	// CodeParkedNotFound: no parked record has the id (or it aged out).
	CodeParkedNotFound = "parked_not_found"
	// CodeNotReplayable: the parked record holds no event (a follow digest,
	// a malformed provider item) or names no sentinel.
	CodeNotReplayable = "not_replayable"
	// CodePostMortem: a replay of a non-terminal event on a subject the
	// sentinel saw close; pass force to deliver it anyway.
	CodePostMortem = "post_mortem"
)

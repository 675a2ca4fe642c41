package sentinel

import "strings"

// GlobMatch reports whether name matches pattern, where '*' matches any run
// of characters (including none) and every other character matches itself.
func GlobMatch(pattern, name string) bool {
	// Iterative wildcard matching with single-star backtracking: linear in
	// practice, no regexp compilation, no exponential blow-up.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// SubjectMatches reports whether a clause subject matches an event's
// subjects: a clause subject ending in '*' matches when any entry starts
// with it minus the star; otherwise it must equal one entry.
func SubjectMatches(clauseSubject string, eventSubjects []string) bool {
	if prefix, ok := strings.CutSuffix(clauseSubject, "*"); ok {
		for _, s := range eventSubjects {
			if strings.HasPrefix(s, prefix) {
				return true
			}
		}
		return false
	}
	for _, s := range eventSubjects {
		if s == clauseSubject {
			return true
		}
	}
	return false
}

// TypesMatch reports whether any glob matches the event type.
func TypesMatch(globs []string, eventType string) bool {
	for _, g := range globs {
		if GlobMatch(g, eventType) {
			return true
		}
	}
	return false
}

// DefaultTypesFunc returns a provider's default types for a clause subject.
type DefaultTypesFunc func(subject string) []string

// Matches reports whether the event matches the spec: OR across clauses,
// each clause needing its subject to match the event's subjects and one of
// its type globs (or the provider's defaults when it has none) to match the
// event's type.
func (s *Spec) Matches(ev *Event, defaults DefaultTypesFunc) bool {
	subjects := ev.AllSubjects()
	for _, c := range s.Match {
		if !SubjectMatches(c.Subject, subjects) {
			continue
		}
		types := c.Types
		if len(types) == 0 && defaults != nil {
			types = defaults(c.Subject)
		}
		if TypesMatch(types, ev.Type) {
			return true
		}
	}
	return false
}

// WatchesSubject reports whether any clause subject matches the event's
// subjects (regardless of types). Closure tracking only tracks watched
// subjects.
func (s *Spec) WatchesSubject(ev *Event) bool {
	subjects := ev.AllSubjects()
	for _, c := range s.Match {
		if SubjectMatches(c.Subject, subjects) {
			return true
		}
	}
	return false
}

// TerminalClauseSubjects returns the clause subjects a terminal event
// satisfies, for until subject_terminal.
func (s *Spec) TerminalClauseSubjects(ev *Event) []string {
	subjects := ev.AllSubjects()
	var out []string
	for _, c := range s.Match {
		if SubjectMatches(c.Subject, subjects) {
			out = append(out, c.Subject)
		}
	}
	return out
}

// ClauseSubjects returns the distinct clause subjects in order.
func (s *Spec) ClauseSubjects() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range s.Match {
		if !seen[c.Subject] {
			seen[c.Subject] = true
			out = append(out, c.Subject)
		}
	}
	return out
}

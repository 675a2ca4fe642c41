package sentinel

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// SpecVersion is the CloudEvents version of every SentinelEvent.
const SpecVersion = "1.0"

// ContentTypeJSON is the datacontenttype of every SentinelEvent.
const ContentTypeJSON = "application/json"

// MaxEventDataBytes caps the data projection of an event.
const MaxEventDataBytes = 32 * 1024

// Event is a SentinelEvent: CloudEvents 1.0 structured JSON with the
// agentproto extension attributes summary, subjects, terminal, consumerref
// and seq. Data is a JSON object kept as raw bytes so that envelopes from
// other providers pass through unchanged.
type Event struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject"`
	Time            string          `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
	Summary         string          `json:"summary"`
	Subjects        []string        `json:"subjects"`
	Terminal        bool            `json:"terminal"`
	ConsumerRef     string          `json:"consumerref,omitempty"`
	Seq             *int64          `json:"seq,omitempty"`
	// SelfCaused marks an event caused by the GitHub identity the provider
	// acts as (its own push, comment, review or merge): the loop shield
	// (a sentinel's muteSelf) journals it instead of delivering it. The
	// attribute is spelled selfcaused: CloudEvents attribute names are
	// lower-case letters and digits only.
	SelfCaused bool `json:"selfcaused,omitempty"`
	// DedupKey is a second identity of the event for the seen window,
	// beside ID: an event whose id comes from an unsigned header (a GitHub
	// delivery's evt_<X-GitHub-Delivery>) carries the digest of its signed
	// body here, so the same body replayed under another id is still a
	// duplicate. Empty for events whose id is their whole identity. It is
	// set only by this node's providers: ParseEnvelope never reads it from
	// a foreign envelope.
	DedupKey string `json:"dedupkey,omitempty"`
}

// NewEvent builds an event with the fixed attributes filled in. data is
// marshalled to a JSON object; a marshal failure yields {}.
func NewEvent(id, source, typ, subject string, subjects []string, t time.Time, summary string, terminal bool, data any) Event {
	raw, err := json.Marshal(data)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		raw = json.RawMessage(`{}`)
	}
	return Event{
		SpecVersion:     SpecVersion,
		ID:              id,
		Source:          source,
		Type:            typ,
		Subject:         subject,
		Time:            FormatTime(t),
		DataContentType: ContentTypeJSON,
		Data:            raw,
		Summary:         summary,
		Subjects:        subjects,
		Terminal:        terminal,
	}
}

// FormatTime renders t as ISO-8601 UTC with milliseconds, the form every
// timestamp in events and messages uses.
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// SeenKeys returns the ids under which the event is deduplicated: its id
// and, when it has a distinct one, its DedupKey.
func (e *Event) SeenKeys() []string {
	if e.DedupKey == "" || e.DedupKey == e.ID {
		return []string{e.ID}
	}
	return []string{e.ID, e.DedupKey}
}

// AllSubjects returns the event's subject hierarchy, falling back to its own
// subject when Subjects is empty.
func (e *Event) AllSubjects() []string {
	if len(e.Subjects) > 0 {
		return e.Subjects
	}
	if e.Subject != "" {
		return []string{e.Subject}
	}
	return nil
}

// Scheme returns the scheme of the event's own subject.
func (e *Event) Scheme() string { return SchemeOf(e.Subject) }

// IsReopened reports whether the event's type ends in ".reopened", which
// lifts post-mortem parking for its subject.
func (e *Event) IsReopened() bool { return strings.HasSuffix(e.Type, ".reopened") }

// Validate checks the envelope field by field and returns an *Error with
// code invalid_envelope naming every invalid or missing field.
func (e *Event) Validate() error {
	var bad []string
	if e.SpecVersion != SpecVersion {
		bad = append(bad, "specversion")
	}
	if e.ID == "" || len(e.ID) > 256 {
		bad = append(bad, "id")
	}
	if len(e.DedupKey) > 256 {
		bad = append(bad, "dedupkey")
	}
	if e.Type == "" || len(e.Type) > MaxTypeLen {
		bad = append(bad, "type")
	}
	if _, err := ParseSubject(e.Subject, false); err != nil {
		bad = append(bad, "subject")
	}
	if e.DataContentType != "" && e.DataContentType != ContentTypeJSON {
		bad = append(bad, "datacontenttype")
	}
	if !isJSONObject(e.Data) {
		bad = append(bad, "data")
	}
	for _, s := range e.Subjects {
		if _, err := ParseSubject(s, false); err != nil {
			bad = append(bad, "subjects")
			break
		}
	}
	if len(bad) > 0 {
		return Errorf("invalid_envelope", "envelope failed validation (invalid or missing: %s)", strings.Join(bad, ", "))
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return false
	}
	return json.Valid(raw)
}

// ParseEnvelope decodes a structured-mode CloudEvent and validates it
// strictly. The specversion must be "1.0". The id, type and subject must
// be non-empty strings, and source, time and summary strings. The data
// must be an object and subjects an array of strings. The terminal flag
// must be a boolean, and so must selfcaused when present. The
// datacontenttype is forced to application/json. The seq falls back to
// itemSeq when the envelope has none.
func ParseEnvelope(raw []byte, itemSeq *int64) (Event, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Event{}, Errorf("invalid_envelope", "envelope is not a JSON object")
	}
	var bad []string
	str := func(name string, required bool) string {
		v, ok := m[name]
		var s string
		if !ok || json.Unmarshal(v, &s) != nil || (required && s == "") {
			bad = append(bad, name)
		}
		return s
	}
	ev := Event{
		SpecVersion: str("specversion", true),
		ID:          str("id", true),
		Source:      str("source", false),
		Type:        str("type", true),
		Subject:     str("subject", true),
		Time:        str("time", false),
		Summary:     str("summary", false),
	}
	if ev.SpecVersion != "" && ev.SpecVersion != SpecVersion {
		bad = append(bad, "specversion")
	}
	if d, ok := m["data"]; !ok || !isJSONObject(d) {
		bad = append(bad, "data")
	} else {
		ev.Data = append(json.RawMessage(nil), bytes.TrimSpace(d)...)
	}
	if v, ok := m["subjects"]; !ok || json.Unmarshal(v, &ev.Subjects) != nil || ev.Subjects == nil {
		bad = append(bad, "subjects")
	}
	if v, ok := m["terminal"]; !ok || json.Unmarshal(v, &ev.Terminal) != nil {
		bad = append(bad, "terminal")
	}
	if v, ok := m["consumerref"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			ev.ConsumerRef = s
		}
	}
	if v, ok := m["selfcaused"]; ok && json.Unmarshal(v, &ev.SelfCaused) != nil {
		bad = append(bad, "selfcaused")
	}
	if v, ok := m["seq"]; ok {
		var n int64
		if json.Unmarshal(v, &n) == nil {
			ev.Seq = &n
		}
	}
	if ev.Seq == nil && itemSeq != nil {
		n := *itemSeq
		ev.Seq = &n
	}
	ev.DataContentType = ContentTypeJSON
	if len(bad) > 0 {
		sort.Strings(bad)
		return Event{}, Errorf("invalid_envelope", "envelope failed validation (invalid or missing: %s)", strings.Join(dedupe(bad), ", "))
	}
	if err := ev.Validate(); err != nil {
		return Event{}, err
	}
	return ev, nil
}

func dedupe(in []string) []string {
	out := in[:0]
	for i, s := range in {
		if i == 0 || in[i-1] != s {
			out = append(out, s)
		}
	}
	return out
}

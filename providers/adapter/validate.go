package adapter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// Caps on what an adapter describes and returns.
const (
	maxNameRunes        = 100
	maxVersionRunes     = 64
	maxDescriptionRunes = 1000
	maxSchemes          = 16
	maxSetupFields      = 32
	maxTypeRules        = 32
	maxTypesPerRule     = 32
	// maxEventBytes caps one event as the adapter wrote it: the data cap
	// and room for the envelope.
	maxEventBytes = sentinel.MaxEventDataBytes + 16<<10
	// maxSummaryRunes caps an event's summary (one line).
	maxSummaryRunes = 1000
	maxSourceRunes  = 512
	maxFailureRunes = 500
	maxExtraBytes   = 4 << 10
)

var (
	fieldNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)
	// eventIDRe is the grammar of an adapter's event id: printable ASCII,
	// no space (ids become journal keys and message ids).
	eventIDRe = regexp.MustCompile(`^[!-~]{1,256}$`)
	typeRe    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// checkDescription returns the handshake check of the adapter named slug:
// the protocol version, the slug, and every field within its grammar and
// caps. A description it accepts is safe to list.
func checkDescription(slug string) func(kit.Description) error {
	return func(d kit.Description) error {
		switch {
		case d.ProtocolVersion != kit.ProtocolVersion:
			return fmt.Errorf("protocol version %d, the node speaks %d", d.ProtocolVersion, kit.ProtocolVersion)
		case d.Slug != slug:
			return fmt.Errorf("describe names the slug %q, the executable's name says %q", oneLine(d.Slug, 64), slug)
		case strings.TrimSpace(d.Name) == "":
			return fmt.Errorf("describe has no name")
		case !d.Capabilities.Poll && !d.Capabilities.Push:
			return fmt.Errorf("capabilities declare neither poll nor push")
		case len(d.Capabilities.Subjects) == 0 || len(d.Capabilities.Subjects) > maxSchemes:
			return fmt.Errorf("capabilities.subjects must name 1 to %d subject schemes", maxSchemes)
		case d.Capabilities.TypicalLatencyMs < 0:
			return fmt.Errorf("capabilities.typicalLatencyMs is negative")
		case len(d.SetupFields) > maxSetupFields:
			return fmt.Errorf("more than %d setup fields", maxSetupFields)
		case len(d.DefaultTypes) > maxTypeRules:
			return fmt.Errorf("more than %d defaultTypes rules", maxTypeRules)
		}
		for _, s := range d.Capabilities.Subjects {
			if _, err := sentinel.ParseSubject(s+":x", false); err != nil || s == "*" {
				return fmt.Errorf("capabilities.subjects: %q is not a subject scheme", oneLine(s, 64))
			}
		}
		names := map[string]bool{}
		for _, f := range d.SetupFields {
			if !fieldNameRe.MatchString(f.Name) || names[f.Name] {
				return fmt.Errorf("setup field %q: a name is a letter then letters, digits or '_' (64 at most), each once", oneLine(f.Name, 64))
			}
			names[f.Name] = true
		}
		for _, r := range d.DefaultTypes {
			if r.Match == "" || len(r.Match) > sentinel.MaxSubjectLen || len(r.Types) > maxTypesPerRule {
				return fmt.Errorf("defaultTypes rule %q: a match glob and at most %d types", oneLine(r.Match, 64), maxTypesPerRule)
			}
			for _, t := range r.Types {
				if err := sentinel.ValidateTypeGlob(t); err != nil {
					return fmt.Errorf("defaultTypes rule %q: %w", oneLine(r.Match, 64), err)
				}
			}
		}
		return nil
	}
}

// cleanDescription returns d with its free text made safe to show: one
// line each, clipped.
func cleanDescription(d kit.Description) kit.Description {
	d.Name = oneLine(d.Name, maxNameRunes)
	d.Version = oneLine(d.Version, maxVersionRunes)
	d.Description = oneLine(d.Description, maxDescriptionRunes)
	fields := make([]providers.SetupField, len(d.SetupFields))
	for i, f := range d.SetupFields {
		f.Description = oneLine(f.Description, 500)
		fields[i] = f
	}
	d.SetupFields = fields
	return d
}

// checkHandle refuses an adapter handle over its caps.
func checkHandle(h kit.Handle) error {
	if len(h.RemoteID) > kit.MaxRemoteID || !utf8.ValidString(h.RemoteID) {
		return fmt.Errorf("%w: remoteId longer than %d bytes", ErrProtocol, kit.MaxRemoteID)
	}
	if len(h.Cursor) > kit.MaxCursorBytes {
		return fmt.Errorf("%w: cursor of %d bytes (the cap is %d)", ErrProtocol, len(h.Cursor), kit.MaxCursorBytes)
	}
	if h.State != nil {
		raw, err := json.Marshal(h.State)
		if err != nil || len(raw) > kit.MaxStateBytes {
			return fmt.Errorf("%w: state over %d bytes", ErrProtocol, kit.MaxStateBytes)
		}
	}
	return nil
}

// eventCheck is what an event of one sentinel must satisfy.
type eventCheck struct {
	slug     string
	schemes  []string // the adapter's declared subject schemes
	clauses  []string // the sentinel's clause subjects
	now      time.Time
	seen     map[string]bool
	maxCount int
}

// events checks every event an adapter returned: the count against the
// limit (a protocol violation for the whole answer), then each event on
// its own. A bad event becomes a Malformed record (its error, digest and
// size, never its data); a good one comes back cleaned.
func (c eventCheck) events(raws []json.RawMessage) ([]sentinel.Event, []providers.Malformed, error) {
	if c.maxCount > 0 && len(raws) > c.maxCount {
		return nil, nil, fmt.Errorf("%w: %d events, more than the limit of %d", ErrProtocol, len(raws), c.maxCount)
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	var out []sentinel.Event
	var bad []providers.Malformed
	for _, raw := range raws {
		ev, err := c.event(raw)
		if err != nil {
			sum := sha256.Sum256(raw)
			bad = append(bad, providers.Malformed{Error: oneLine(err.Error(), 300), Digest: hex.EncodeToString(sum[:]), Bytes: len(raw)})
			continue
		}
		out = append(out, ev)
	}
	return out, bad, nil
}

// event checks and cleans one event.
func (c eventCheck) event(raw json.RawMessage) (sentinel.Event, error) {
	if len(raw) > maxEventBytes {
		return sentinel.Event{}, fmt.Errorf("adapter_event_too_large: %d bytes (the cap is %d)", len(raw), maxEventBytes)
	}
	ev, err := sentinel.ParseEnvelope(raw, nil)
	if err != nil {
		return sentinel.Event{}, err
	}
	switch {
	case !eventIDRe.MatchString(ev.ID):
		return sentinel.Event{}, fmt.Errorf("adapter_event_invalid: the id must be printable ASCII without spaces")
	case c.seen[ev.ID]:
		return sentinel.Event{}, fmt.Errorf("adapter_event_invalid: the id %s repeats within one answer", ev.ID)
	case !typeRe.MatchString(ev.Type):
		return sentinel.Event{}, fmt.Errorf("adapter_event_invalid: the type must be letters, digits, '.', '_' and '-'")
	case len(ev.Data) > sentinel.MaxEventDataBytes:
		return sentinel.Event{}, fmt.Errorf("adapter_event_too_large: data of %d bytes (the cap is %d)", len(ev.Data), sentinel.MaxEventDataBytes)
	}
	if len(ev.Subjects) == 0 {
		ev.Subjects = []string{ev.Subject}
	}
	if !slices.Contains(ev.Subjects, ev.Subject) {
		return sentinel.Event{}, fmt.Errorf("adapter_event_invalid: subjects must list the event's own subject")
	}
	for _, s := range ev.Subjects {
		if !slices.Contains(c.schemes, sentinel.SchemeOf(s)) {
			return sentinel.Event{}, fmt.Errorf("adapter_event_foreign_subject: %q is outside the adapter's declared schemes", oneLine(s, 100))
		}
	}
	own := false
	for _, cs := range c.clauses {
		if sentinel.SubjectMatches(cs, ev.Subjects) {
			own = true
			break
		}
	}
	if !own {
		return sentinel.Event{}, fmt.Errorf("adapter_event_foreign_subject: %s is not a subject this sentinel watches", oneLine(ev.Subject, 100))
	}
	if ev.Time == "" {
		ev.Time = sentinel.FormatTime(c.now)
	} else if t, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil {
		return sentinel.Event{}, fmt.Errorf("adapter_event_invalid: time is not RFC 3339")
	} else {
		ev.Time = sentinel.FormatTime(t)
	}
	ev.Source = oneLine(ev.Source, maxSourceRunes)
	if ev.Source == "" {
		ev.Source = "sentinel-adapter:" + c.slug
	}
	ev.Summary = sentinel.ClipUTF8(oneLine(ev.Summary, maxSummaryRunes), sentinel.MaxSummaryBytes)
	ev.ConsumerRef = ""
	c.seen[ev.ID] = true
	return ev, nil
}

// cleanMalformed makes the adapter's own Malformed records safe: one line
// of error, a bounded digest and delivery id.
func cleanMalformed(in []providers.Malformed, red *redactor) []providers.Malformed {
	out := make([]providers.Malformed, 0, len(in))
	for _, m := range in {
		m.Error = red.redact(oneLine(m.Error, 300))
		m.RemoteDeliveryID = oneLine(m.RemoteDeliveryID, 256)
		if len(m.Digest) > 128 {
			m.Digest = m.Digest[:128]
		}
		out = append(out, m)
	}
	return out
}

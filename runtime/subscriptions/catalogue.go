package subscriptions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/agentproto/sentinel"
)

// Event type names.
const (
	EventPRActivity    = "github.pull_request.activity"
	EventSentinelEvent = "sentinel.event"
)

// EventType is one events/list descriptor.
type EventType struct {
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Delivery      []string       `json:"delivery"`
	InputSchema   map[string]any `json:"inputSchema"`
	PayloadSchema map[string]any `json:"payloadSchema"`
}

// typesSchema is the schema of a types argument.
var typesSchema = map[string]any{
	"type": "array", "maxItems": sentinel.MaxTypes,
	"items":       map[string]any{"type": "string", "minLength": 1, "maxLength": sentinel.MaxTypeLen},
	"description": "event-type globs ('*' is the only wildcard), e.g. github.check_suite.*",
}

// payloadSchema is the schema of every event's data: the CloudEvents 1.0
// envelope a session inbox carries (with the agentproto extensions; the
// trust facts ride in data).
var payloadSchema = map[string]any{
	"type":        "object",
	"description": "the SentinelEvent: a CloudEvents 1.0 structured envelope (docs/api.md); payloads are untrusted data",
	"required":    []string{"specversion", "id", "source", "type", "subject", "time", "data"},
	"properties": map[string]any{
		"specversion":     map[string]any{"type": "string", "const": sentinel.SpecVersion},
		"id":              map[string]any{"type": "string"},
		"source":          map[string]any{"type": "string"},
		"type":            map[string]any{"type": "string"},
		"subject":         map[string]any{"type": "string"},
		"time":            map[string]any{"type": "string", "format": "date-time"},
		"datacontenttype": map[string]any{"type": "string"},
		"data":            map[string]any{"type": "object"},
		"summary":         map[string]any{"type": "string"},
		"subjects":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"terminal":        map[string]any{"type": "boolean"},
		"selfCaused":      map[string]any{"type": "boolean"},
	},
}

// Catalogue returns the event types, with the delivery modes this node
// offers (webhook only when enabled).
func Catalogue(webhook bool) []EventType {
	delivery := []string{sentinel.ModePoll, sentinel.ModePush}
	if webhook {
		delivery = append(delivery, sentinel.ModeWebhook)
	}
	return []EventType{
		{
			Name: EventPRActivity,
			Description: "Activity on one GitHub pull request: CI verdicts, reviews, pushes, comments, the close or merge " +
				"(by default the PR set of sentinel_watch).",
			Delivery: delivery,
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"prUrl":    map[string]any{"type": "string", "description": "https://github.com/<owner>/<repo>/pull/<n>"},
					"subject":  map[string]any{"type": "string", "description": "github:<owner>/<repo>#<n>"},
					"types":    typesSchema,
					"provider": providerSchema,
				},
				"oneOf":                []any{map[string]any{"required": []string{"prUrl"}}, map[string]any{"required": []string{"subject"}}},
				"additionalProperties": false,
			},
			PayloadSchema: payloadSchema,
		},
		{
			Name:        EventSentinelEvent,
			Description: "Every event of a subject the providers watch (a subject ending in '*' is a prefix).",
			Delivery:    delivery,
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"subject":  map[string]any{"type": "string", "description": "a subject such as github:acme/widgets#7, github:acme/widgets, or a prefix ending in '*'"},
					"types":    typesSchema,
					"provider": providerSchema,
				},
				"required":             []string{"subject"},
				"additionalProperties": false,
			},
			PayloadSchema: payloadSchema,
		},
	}
}

// args are the decoded arguments of both event types.
type args struct {
	PRURL    *string  `json:"prUrl"`
	Subject  *string  `json:"subject"`
	Types    []string `json:"types"`
	Provider *string  `json:"provider"`
}

// providerSchema is the schema of the optional provider argument.
var providerSchema = map[string]any{"type": "string", "maxLength": sentinel.MaxProviderLen,
	"description": "a provider slug (list_sentinel_adapters); omitted, the provider is auto-selected as for sentinel_watch"}

// Resolved is what a subscription's arguments make of its sentinel.
type Resolved struct {
	// Canonical is the arguments' canonical JSON (sorted keys).
	Canonical []byte
	Match     []sentinel.Clause
	Until     sentinel.Until
	Provider  string
}

// Resolve validates the arguments of an event type against its
// inputSchema and returns what they make of the sentinel behind it.
// Errors are event_not_found or invalid_arguments.
func Resolve(name string, raw json.RawMessage) (Resolved, error) {
	canonical, match, until, provider, err := resolve(name, raw)
	return Resolved{Canonical: canonical, Match: match, Until: until, Provider: provider}, err
}

func resolve(name string, raw json.RawMessage) (canonical []byte, match []sentinel.Clause, until sentinel.Until, provider string, err error) {
	var props []string
	switch name {
	case EventPRActivity:
		props = []string{"prUrl", "provider", "subject", "types"}
	case EventSentinelEvent:
		props = []string{"provider", "subject", "types"}
	default:
		return nil, nil, until, "", sentinel.Errorf(sentinel.CodeEventNotFound, "no event type %q (see events/list)", name)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "arguments must be a JSON object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(props, k) {
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument %q is not in the inputSchema of %s (allowed: %v)", k, name, props)
		}
	}
	var a args
	for _, k := range keys {
		var err error
		switch k {
		case "prUrl":
			err = json.Unmarshal(obj[k], &a.PRURL)
		case "subject":
			err = json.Unmarshal(obj[k], &a.Subject)
		case "types":
			err = json.Unmarshal(obj[k], &a.Types)
		case "provider":
			err = json.Unmarshal(obj[k], &a.Provider)
		}
		if err != nil || bytes.Equal(bytes.TrimSpace(obj[k]), []byte("null")) {
			want := "a string"
			if k == "types" {
				want = "an array of strings"
			}
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument %q must be %s", k, want)
		}
	}
	if len(a.Types) > sentinel.MaxTypes {
		return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"types\" has more than %d entries", sentinel.MaxTypes)
	}
	for _, t := range a.Types {
		if err := sentinel.ValidateTypeGlob(t); err != nil {
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"types\": %s", err.Error())
		}
	}
	switch name {
	case EventPRActivity:
		var subject string
		switch {
		case a.PRURL != nil && a.Subject != nil:
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "give either prUrl or subject, not both")
		case a.PRURL != nil:
			ref, err := sentinel.ParsePRURL(*a.PRURL)
			if err != nil {
				return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"prUrl\": %s", err.Error())
			}
			subject = ref.Subject()
		case a.Subject != nil:
			ref, err := sentinel.ParseGitHubSubject(*a.Subject)
			if err != nil || ref.Repo == "" || ref.Number == 0 {
				return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"subject\" must be a pull request subject github:<owner>/<repo>#<n>")
			}
			subject = *a.Subject
		default:
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "give prUrl or subject")
		}
		types := a.Types
		if len(types) == 0 {
			types = sentinel.DefaultPRTypes()
		}
		match = []sentinel.Clause{{Subject: subject, Types: types}}
		until = sentinel.Until{Kind: sentinel.UntilSubjectTerminal}
	case EventSentinelEvent:
		if a.Subject == nil {
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"subject\" is required")
		}
		if _, err := sentinel.ParseSubject(*a.Subject, true); err != nil {
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"subject\": %s", err.Error())
		}
		match = []sentinel.Clause{{Subject: *a.Subject, Types: a.Types}}
		until = sentinel.Until{Kind: sentinel.UntilNever}
	}
	if a.Provider != nil {
		if *a.Provider == "" || len(*a.Provider) > sentinel.MaxProviderLen {
			return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "argument \"provider\" must be a provider slug")
		}
		provider = *a.Provider
	}
	canonical, err = canonicalJSON(raw)
	if err != nil {
		return nil, nil, until, "", sentinel.Errorf(sentinel.CodeInvalidArguments, "arguments: %s", err.Error())
	}
	return canonical, match, until, provider, nil
}

// canonicalJSON re-encodes a JSON value with sorted object keys (Go's
// encoding of maps), so equal arguments compare equal as bytes.
func canonicalJSON(raw []byte) ([]byte, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return json.Marshal(v)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

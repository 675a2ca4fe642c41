package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// inputSchema sets the tool's input schema from the argument struct T
// (google/jsonschema-go through mcp-go: a field without omitempty is
// required, additionalProperties is false) and tidies it for clients:
// nullable unions such as ["null","array"] become the plain type, since
// the handlers treat null and absent alike. mcp-go leaves the schema empty
// when generation fails; that is a programming error, so it panics here
// rather than advertise a tool that takes anything.
func inputSchema[T any]() mcp.ToolOption {
	gen := mcp.WithInputSchema[T]()
	return func(t *mcp.Tool) {
		gen(t)
		if len(t.RawInputSchema) == 0 {
			panic(fmt.Sprintf("mcp: no input schema generated for tool %s", t.Name))
		}
		var m map[string]any
		if err := json.Unmarshal(t.RawInputSchema, &m); err != nil {
			panic(fmt.Sprintf("mcp: input schema of tool %s: %v", t.Name, err))
		}
		tidy(m)
		if _, has := m["properties"]; !has {
			m["properties"] = map[string]any{} // some clients require it, even when empty
		}
		raw, err := json.Marshal(m)
		if err != nil {
			panic(fmt.Sprintf("mcp: input schema of tool %s: %v", t.Name, err))
		}
		t.RawInputSchema = raw
	}
}

// tidy rewrites nullable type unions in place, recursively.
func tidy(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ts, isList := x["type"].([]any); isList {
			var rest []any
			for _, t := range ts {
				if t != "null" {
					rest = append(rest, t)
				}
			}
			if len(rest) == 1 {
				x["type"] = rest[0]
			} else {
				x["type"] = rest
			}
		}
		for _, c := range x {
			tidy(c)
		}
	case []any:
		for _, c := range x {
			tidy(c)
		}
	}
}

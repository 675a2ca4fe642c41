package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
)

// ok builds a success result: {"ok":true} merged with fields, as both
// structured content and JSON text.
func ok(fields map[string]any) *mcp.CallToolResult {
	out := map[string]any{"ok": true}
	for k, v := range fields {
		out[k] = v
	}
	return mcp.NewToolResultStructuredOnly(out)
}

// failure is the body of an error result.
type failure struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// fail builds an error result {"ok":false,"error":code,"message":"tool: ..."}
// with isError set. Domain errors keep their code (renamed through rename
// when given); anything else is "internal" with a generic message, so no
// internal detail leaks.
func fail(tool string, err error, rename map[string]string) *mcp.CallToolResult {
	code, msg := sentinel.CodeInternal, "internal error"
	var de *sentinel.Error
	if errors.As(err, &de) {
		code, msg = de.Code, de.Error()
	}
	if r, found := rename[code]; found {
		code = r
	}
	res := mcp.NewToolResultStructuredOnly(failure{OK: false, Error: code, Message: tool + ": " + msg})
	res.IsError = true
	return res
}

// invalid builds an invalid_input error result.
func invalid(tool, format string, args ...any) *mcp.CallToolResult {
	return fail(tool, sentinel.Errorf(sentinel.CodeInvalidInput, format, args...), nil)
}

// bind decodes the call's arguments into v, refusing unknown fields, and
// returns readable messages naming the argument at fault (never its value,
// which may be a secret).
func bind(req mcp.CallToolRequest, v any) error {
	var raw []byte
	switch {
	case len(req.Params.RawArguments) > 0:
		raw = req.Params.RawArguments
	case req.Params.Arguments == nil:
		raw = []byte("{}")
	default:
		if r, isRaw := req.Params.Arguments.(json.RawMessage); isRaw {
			raw = r
		} else {
			b, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return sentinel.Errorf(sentinel.CodeInvalidInput, "arguments are not a JSON object")
			}
			raw = b
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return sentinel.Errorf(sentinel.CodeInvalidInput, "argument %q must be %s, not a JSON %s", te.Field, jsonKind(te.Type.String()), te.Value)
	case errors.As(err, &te):
		return sentinel.Errorf(sentinel.CodeInvalidInput, "arguments must be a JSON object")
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		return sentinel.Errorf(sentinel.CodeInvalidInput, "arguments are not valid JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return sentinel.Errorf(sentinel.CodeInvalidInput, "unknown argument %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	var de *sentinel.Error
	if errors.As(err, &de) {
		return de
	}
	return sentinel.Errorf(sentinel.CodeInvalidInput, "arguments are not valid: %s", err.Error())
}

// jsonKind names a Go type the way a JSON caller thinks of it.
func jsonKind(goType string) string {
	switch {
	case goType == "string" || strings.HasSuffix(goType, "Urgency"):
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	}
	return fmt.Sprintf("a %s", goType)
}

// boolHint returns a pointer to b (tool annotations).
func boolHint(b bool) *bool { return &b }

// annotations sets the four hints deliberately (mcp-go defaults to
// destructive and open-world).
func annotations(title string, readOnly, destructive, idempotent, openWorld bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    boolHint(readOnly),
		DestructiveHint: boolHint(destructive),
		IdempotentHint:  boolHint(idempotent),
		OpenWorldHint:   boolHint(openWorld),
	})
}

// typed binds a call's arguments to T (an invalid_input result names the
// bad argument) and runs fn with them.
func typed[T any](tool string, fn func(ctx context.Context, a T) *mcp.CallToolResult) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a T
		if err := bind(req, &a); err != nil {
			return fail(tool, err, nil), nil
		}
		return fn(ctx, a), nil
	}
}

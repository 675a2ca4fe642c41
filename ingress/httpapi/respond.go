package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// WriteJSON writes v as JSON with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// WriteError maps err through the catalogue and writes
// {"error": code, "message": ...}.
func WriteError(w http.ResponseWriter, err error) {
	status, body := api.FromError(err)
	WriteJSON(w, status, body)
}

// Decode reads exactly one JSON value from the body into v, refusing
// unknown fields, trailing data and bodies over the limit set by the
// body-limit middleware. The body is parsed as JSON whatever the
// Content-Type says (curl -d sends form encoding). Errors carry the codes
// malformed_json, unknown_field, body_too_large and body_timeout.
func Decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		if err != nil {
			if de := decodeError(err); isCode(de, sentinel.CodeBodyTooLarge) || isCode(de, api.CodeBodyTimeout) {
				return de
			}
		}
		return sentinel.Errorf(sentinel.CodeMalformedJSON, "request body must hold exactly one JSON value")
	}
	return nil
}

func isCode(err error, code string) bool {
	var de *sentinel.Error
	return errors.As(err, &de) && de.Code == code
}

func decodeError(err error) error {
	var mbe *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mbe):
		return sentinel.Errorf(sentinel.CodeBodyTooLarge, "request body is larger than %d bytes", mbe.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return sentinel.Errorf(api.CodeBodyTimeout, "request body did not arrive within the body read timeout")
	case errors.Is(err, io.EOF):
		return sentinel.Errorf(sentinel.CodeMalformedJSON, "request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return sentinel.Errorf(sentinel.CodeMalformedJSON, "request body is truncated JSON")
	case errors.As(err, &se):
		return sentinel.Errorf(sentinel.CodeMalformedJSON, "request body is not valid JSON (offset %d)", se.Offset)
	case errors.As(err, &te):
		return sentinel.Errorf(sentinel.CodeMalformedJSON, "field %q must be %s", te.Field, te.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return sentinel.Errorf(sentinel.CodeUnknownField, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return sentinel.Errorf(sentinel.CodeMalformedJSON, "request body is not valid: %s", err.Error())
}

package sentinel

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Hook is a session hook: either a command argv template (run without a
// shell; placeholders {sessionId}, {messageId}, {urgency}, {kind} are
// substituted in each argument) or an http(s) URL the node POSTs to.
// On the wire it is an argv array, a URL string, or the object form.
type Hook struct {
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	// TimeoutMs bounds one run (default 10000, at most 120000).
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Redacted marks a hook in a session view (see Redact). A redacted
	// hook is refused at registration.
	Redacted bool `json:"redacted,omitempty"`
}

// SessionHooks are a session's optional hooks. Resume revives an ended
// session and prints (command) or returns (URL, JSON {"sessionId"} or
// text) its live id. Notify runs when a message lands, with the message
// JSON on stdin or as the body.
type SessionHooks struct {
	Resume *Hook `json:"resume,omitempty"`
	Notify *Hook `json:"notify,omitempty"`
}

// Redact returns the hook as session views show it, without the secrets
// a hook may carry. A URL shows as scheme://host/path with its userinfo,
// query and fragment replaced by "[redacted]" (RedactURL). A command shows
// as its program (argv[0]) followed, when it has arguments, by one
// "[redacted]" element. Redacted is set; nil stays nil.
func (h *Hook) Redact() *Hook {
	if h == nil {
		return nil
	}
	out := &Hook{TimeoutMs: h.TimeoutMs, Redacted: true}
	if h.URL != "" {
		out.URL = RedactURL(h.URL)
	}
	if len(h.Command) > 0 {
		out.Command = []string{h.Command[0]}
		if len(h.Command) > 1 {
			out.Command = append(out.Command, Redacted)
		}
	}
	return out
}

// UnmarshalJSON accepts ["argv", ...], "https://url" or the object form
// (unknown fields refused).
func (h *Hook) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '[':
		var argv []string
		if err := json.Unmarshal(b, &argv); err != nil {
			return err
		}
		*h = Hook{Command: argv}
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*h = Hook{URL: s}
		return nil
	}
	type plain Hook
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*h = Hook(p)
	return nil
}

// Validate checks that exactly one of command and URL is set, that a URL
// is http(s), and that the timeout is within 0..120000 ms. A redacted hook
// (copied from a session view) is refused. name is the hook's key in
// error messages (resume, notify).
func (h *Hook) Validate(name string) error {
	switch {
	case len(h.Command) == 0 && h.URL == "":
		return Errorf(CodeInvalidInput, "hooks.%s: give a command argv or a URL", name)
	case len(h.Command) > 0 && h.URL != "":
		return Errorf(CodeInvalidInput, "hooks.%s: give either a command or a URL, not both", name)
	case h.URL != "" && !strings.HasPrefix(h.URL, "http://") && !strings.HasPrefix(h.URL, "https://"):
		return Errorf(CodeInvalidInput, "hooks.%s: URL must be http(s)", name)
	case len(h.Command) > 0 && h.Command[0] == "":
		return Errorf(CodeInvalidInput, "hooks.%s: command is empty", name)
	case h.TimeoutMs < 0 || h.TimeoutMs > 120000:
		return Errorf(CodeInvalidInput, "hooks.%s: timeoutMs must be within 0..120000", name)
	case h.Redacted:
		return Errorf(CodeInvalidInput, "hooks.%s: this is a redacted hook from a session view; give the hook itself", name)
	}
	return nil
}

// Redact returns the hooks with each one redacted (Hook.Redact).
func (h *SessionHooks) Redact() *SessionHooks {
	if h == nil {
		return nil
	}
	return &SessionHooks{Resume: h.Resume.Redact(), Notify: h.Notify.Redact()}
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentproto/sentinel"
)

// hookPayload is the part of a harness hook payload the verbs read
// (Claude Code's field names; a generic harness sends the same).
type hookPayload struct {
	SessionID      string `json:"session_id"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	TranscriptPath string `json:"transcript_path"`
	Message        string `json:"message"`
	Prompt         string `json:"prompt"`
	Reason         string `json:"reason"`
	Source         string `json:"source"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// readPayload reads the hook JSON from stdin (at most 1 MiB).
func readPayload(r io.Reader) (hookPayload, error) {
	var p hookPayload
	if r == nil {
		return p, errors.New("no hook payload on stdin")
	}
	raw, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return p, fmt.Errorf("read the hook payload: %w", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return p, errors.New("no hook payload on stdin")
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("the hook payload is not JSON: %w", err)
	}
	if p.SessionID == "" {
		p.SessionID = os.Getenv(EnvSession)
	}
	if !sentinel.ValidSessionID(p.SessionID) {
		return p, fmt.Errorf("session_id %q is missing or invalid", p.SessionID)
	}
	return p, nil
}

func envParent() string { return os.Getenv("AGENTPROTO_PARENT_SESSION") }

// lastAssistantText returns the text of the last assistant message of a
// Claude Code transcript (JSON lines), reading only its tail; "" when it
// cannot.
func lastAssistantText(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tailBytes = 512 << 10
	if st, err := f.Stat(); err == nil && st.Size() > tailBytes {
		_, _ = f.Seek(st.Size()-tailBytes, io.SeekStart)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	last := ""
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || (line.Type != "assistant" && line.Message.Role != "assistant") {
			continue
		}
		if t := contentText(line.Message.Content); t != "" {
			last = t
		}
	}
	return last
}

// contentText joins the text parts of a message content (a string or a
// list of typed parts).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

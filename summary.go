package sentinel

import "unicode/utf8"

// MaxSummaryBytes caps an event's summary. Events are clipped to it where
// they enter the bus, so the inbox text built from a summary ("[scheme]
// summary") always fits the inbox's text cap, and the identity stub of a
// trimmed event always fits its data cap.
const MaxSummaryBytes = 4096

// ClipSummary returns the event with its summary clipped to
// MaxSummaryBytes (see ClipUTF8). The event is a copy: the caller's is
// left as it was.
func ClipSummary(ev Event) Event {
	ev.Summary = ClipUTF8(ev.Summary, MaxSummaryBytes)
	return ev
}

// ClipUTF8 returns s when it is at most n bytes long, else its longest
// prefix that ends on a rune boundary and leaves room for a trailing "…",
// followed by "…"; the result is never longer than n bytes and is valid
// UTF-8 when s is. n below the length of "…" clips to a bare prefix.
func ClipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	suffix := ellipsis
	if n < len(ellipsis) {
		suffix = ""
	}
	cut := n - len(suffix)
	if cut < 0 {
		cut = 0
	}
	// Step back to a rune start: never split a multi-byte sequence.
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

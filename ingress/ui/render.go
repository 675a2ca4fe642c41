package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// staticHandler serves the embedded CSS and JavaScript under /ui/static/.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the folder
	}
	return http.StripPrefix("/ui/static/", http.FileServerFS(sub))
}

// templates holds one template set per page (the layout plus the page's
// file, which defines "content" and its "region:<name>" blocks).
type templates struct {
	sets map[string]*template.Template
}

// funcs are the helpers the templates use; each returns plain text that
// html/template escapes where it lands.
var funcs = template.FuncMap{
	"ms":    fmtMs,
	"join":  strings.Join,
	"json":  prettyJSON,
	"since": fmtSince,
	"ellipsis": func(n int, s string) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n]) + "…"
		}
		return s
	},
}

// parseTemplates parses every page's template set.
func parseTemplates() (*templates, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	t := &templates{sets: map[string]*template.Template{}}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		set, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("parse dashboard template %s: %w", n, err)
		}
		t.sets[base] = set
	}
	return t, nil
}

// view is what every page template receives.
type view struct {
	Title string
	// Nav is the navigation entry of the page (aria-current).
	Nav string
	// CSRF is the session's token for the page's forms ("" signed out).
	CSRF string
	// Stream is the URL of the page's event stream ("" for none).
	Stream string
	// Error and Notice are messages shown above the content.
	Error  string
	Notice string
	Data   any
}

// render writes a whole page.
func (t *templates) render(w http.ResponseWriter, page string, status int, v view) {
	var buf bytes.Buffer
	set, ok := t.sets[page]
	if !ok {
		http.Error(w, "no such dashboard page", http.StatusInternalServerError)
		return
	}
	if err := set.ExecuteTemplate(&buf, "layout", v); err != nil {
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// region renders one live region of a page.
func (t *templates) region(page, name string, v view) (string, error) {
	var buf bytes.Buffer
	if err := t.sets[page].ExecuteTemplate(&buf, "region:"+name, v); err != nil {
		return "", fmt.Errorf("render region %s of %s: %w", name, page, err)
	}
	return buf.String(), nil
}

// fmtMs formats epoch milliseconds as UTC time ("" for zero).
func fmtMs(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
}

// fmtSince formats a time ("" for zero).
func fmtSince(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// prettyJSON indents v as JSON (for specs and event data).
func prettyJSON(v any) string {
	if raw, ok := v.(json.RawMessage); ok {
		var out bytes.Buffer
		if json.Indent(&out, raw, "", "  ") == nil {
			return out.String()
		}
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

// escapeText escapes s for HTML text.
func escapeText(s string) string { return template.HTMLEscapeString(s) }

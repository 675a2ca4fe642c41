package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often an idle stream sends a comment line, so proxies
// and the browser keep it open.
const keepAlive = 15 * time.Second

// regionEvent is the data of an SSE "region" event: the id of the element
// to replace and its new HTML (rendered by html/template, escaped like the
// page itself).
type regionEvent struct {
	ID   string `json:"id"`
	HTML string `json:"html"`
}

// stream serves a page's event stream (GET <page>/events): it re-reads the
// page's data every Refresh (every p.every refreshes) and sends a "region" event for each live region
// whose rendering changed (all of them first, so a page rendered a moment
// before catches up). The page's script swaps the region in. It ends when
// the client goes, the node stops (Close), or the session expires or is
// signed out (an "expired" event first); past
// MaxStreams open streams it answers 429.
func (h *Handler) stream(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case h.streams <- struct{}{}:
			defer func() { <-h.streams }()
		default:
			http.Error(w, "too many open dashboard streams", http.StatusTooManyRequests)
			return
		}
		fl, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		hd := w.Header()
		hd.Set("Content-Type", "text/event-stream")
		hd.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprint(w, "retry: 2000\n\n")
		fl.Flush()

		r = r.WithContext(context.WithValue(r.Context(), streamingKey{}, true))
		every := max(p.every, 1)
		sess := sessionOf(r)
		last := map[string]string{}
		tick := time.NewTicker(h.cfg.Refresh)
		defer tick.Stop()
		idle := time.Now()
		for n := 0; ; n++ {
			if !h.signer.live(sess) {
				_, _ = fmt.Fprint(w, "event: expired\ndata: {}\n\n")
				fl.Flush()
				return
			}
			var sent bool
			if n%every == 0 {
				var err error
				if sent, err = h.sendRegions(w, p, r, last); err != nil {
					return
				}
			}
			if sent || time.Since(idle) >= keepAlive {
				if !sent {
					_, _ = fmt.Fprint(w, ": keep-alive\n\n")
				}
				fl.Flush()
				idle = time.Now()
			}
			select {
			case <-r.Context().Done():
				return
			case <-h.done:
				return
			case <-tick.C:
			}
		}
	}
}

// sendRegions renders p's regions and writes an event for each one that
// differs from last (updated in place); it reports whether it wrote any.
// A page whose data cannot be read shows the error in its first region.
func (h *Handler) sendRegions(w http.ResponseWriter, p page, r *http.Request, last map[string]string) (bool, error) {
	v, _ := h.viewFor(p, r)
	sent := false
	for _, name := range p.regions {
		html, err := h.tmpl.region(p.tmpl, name, v)
		if err != nil {
			h.cfg.Log.Warn("dashboard region failed", "page", p.tmpl, "region", name, "err", err)
			continue
		}
		if v.Error != "" && name == p.regions[0] {
			html = `<p class="error" role="alert">` + escapeText(v.Error) + `</p>` + html
		}
		if last[name] == html {
			continue
		}
		last[name] = html
		b, err := json.Marshal(regionEvent{ID: "region-" + name, HTML: html})
		if err != nil {
			return sent, err
		}
		if _, err := fmt.Fprintf(w, "event: region\ndata: %s\n\n", b); err != nil {
			return sent, err
		}
		sent = true
	}
	return sent, nil
}

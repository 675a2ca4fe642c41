package ui

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// loginForm serves the sign-in form (GET /ui/login). A request that is
// already signed in goes to the sentinels page.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName(r)); err == nil {
		if _, err := h.signer.verify(c.Value, listenerPort(r)); err == nil {
			http.Redirect(w, r, "/ui/sentinels", http.StatusSeeOther)
			return
		}
	}
	h.tmpl.render(w, "login", http.StatusOK, view{Title: "Sign in", Nav: "login"})
}

// login checks the submitted token (POST /ui/login, form field "token")
// against the node's API token in constant time. A match sets the session
// cookie and redirects to the sentinels page, whatever the failures
// counted against the client's address. A wrong token answers the form
// again with 401 and counts against the address; past maxFailures a
// minute it is slowed first (loginLimiter.fail) and answered 429 with
// Retry-After. The token is never echoed back.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if !sameOrigin(r) {
		http.Error(w, "forbidden: sign in from the dashboard's own form (same-origin Origin header)", http.StatusForbidden)
		return
	}
	if err := r.ParseForm(); err != nil {
		h.tmpl.render(w, "login", http.StatusBadRequest, view{Title: "Sign in", Nav: "login", Error: "The form could not be read."})
		return
	}
	key := clientKey(r)
	if !tokenMatches(h.cfg.Token, r.PostForm.Get("token")) {
		delay := h.limiter.fail(key)
		h.cfg.Log.Warn("dashboard sign-in refused: wrong token", "remote", key, "delay", delay)
		if delay > 0 {
			h.cfg.Sleep(r.Context(), delay)
			_, wait := h.limiter.blocked(key)
			secs := max(1, int(wait.Round(time.Second)/time.Second))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			h.tmpl.render(w, "login", http.StatusTooManyRequests, view{Title: "Sign in", Nav: "login",
				Error: fmt.Sprintf("Too many wrong tokens from your address: each further one is slowed; the count resets in %d s.", secs)})
			return
		}
		h.tmpl.render(w, "login", http.StatusUnauthorized, view{Title: "Sign in", Nav: "login",
			Error: "Wrong token. Use the node's API token (<home>/daemon-token)."})
		return
	}
	h.limiter.reset(key)
	_, value, err := h.signer.mint(listenerPort(r))
	if err != nil {
		http.Error(w, "could not start a session", http.StatusInternalServerError)
		return
	}
	setCookie(w, r, value, h.cfg.SessionTTL)
	http.Redirect(w, r, "/ui/sentinels", http.StatusSeeOther)
}

// logout signs the session out (POST /ui/logout, behind write): the
// cookie is cleared and its session revoked on this node.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	h.signer.revoke(sessionOf(r))
	clearCookie(w, r)
	h.tmpl.render(w, "login", http.StatusOK, view{Title: "Sign in", Nav: "login", Notice: "Signed out."})
}

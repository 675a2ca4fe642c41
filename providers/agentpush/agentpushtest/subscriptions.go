package agentpushtest

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Subscription is the server-side record of one subscription, as created.
// CallbackSecret is never returned by the API.
type Subscription struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Source         string          `json:"source"`
	Subject        string          `json:"subject"`
	Types          []string        `json:"types"`
	Mode           string          `json:"mode"`
	ConsumerRef    string          `json:"consumer_ref"`
	Until          json.RawMessage `json:"until,omitempty"`
	CallbackURL    string          `json:"callback_url,omitempty"`
	CallbackSecret string          `json:"-"`
	Status         string          `json:"status"`
}

// sub is a subscription and its queue.
type sub struct {
	Subscription
	nextSeq int64
	acked   int64
	rows    []row
}

// createRequest is the POST /subscriptions body.
type createRequest struct {
	Name           string          `json:"name"`
	Source         string          `json:"source"`
	Subject        string          `json:"subject"`
	Types          []string        `json:"types"`
	Mode           string          `json:"mode"`
	ConsumerRef    string          `json:"consumer_ref"`
	Until          json.RawMessage `json:"until"`
	CallbackURL    string          `json:"callback_url"`
	CallbackSecret string          `json:"callback_secret"`
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	if req.Mode == "" {
		req.Mode = "poll"
	}
	switch {
	case req.Subject == "" || req.Source == "" || req.ConsumerRef == "":
		writeError(w, http.StatusBadRequest, "subject, source and consumer_ref are required")
		return
	case req.Mode != "poll" && req.Mode != "push":
		writeError(w, http.StatusBadRequest, "mode must be poll or push")
		return
	case req.Mode == "push" && (req.CallbackURL == "" || req.CallbackSecret == ""):
		writeError(w, http.StatusBadRequest, "push subscriptions need callback_url and callback_secret")
		return
	}
	s.mu.Lock()
	s.nextID++
	sb := &sub{Subscription: Subscription{
		ID:             "sub_" + strconv.Itoa(s.nextID),
		Name:           req.Name,
		Source:         req.Source,
		Subject:        req.Subject,
		Types:          req.Types,
		Mode:           req.Mode,
		ConsumerRef:    req.ConsumerRef,
		Until:          req.Until,
		CallbackURL:    req.CallbackURL,
		CallbackSecret: req.CallbackSecret,
		Status:         "active",
	}}
	s.subs[sb.ID] = sb
	view := sb.Subscription
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"subscription": view})
}

// lookup returns the live subscription named by the path, or answers 404.
// It returns with mu held when ok.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (*sub, bool) {
	s.mu.Lock()
	sb, ok := s.subs[r.PathValue("id")]
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "subscription not found")
		return nil, false
	}
	return sb, true
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	sb, ok := s.lookup(w, r)
	if !ok {
		return
	}
	view := sb.Subscription
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"subscription": view})
}

func (s *Server) handlePatch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CallbackURL *string         `json:"callback_url"`
		Until       json.RawMessage `json:"until"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body")
		return
	}
	sb, ok := s.lookup(w, r)
	if !ok {
		return
	}
	if req.CallbackURL != nil {
		sb.CallbackURL = *req.CallbackURL
	}
	if len(req.Until) > 0 {
		sb.Until = req.Until
	}
	view := sb.Subscription
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"subscription": view})
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.lookup(w, r); !ok {
		return
	}
	delete(s.subs, r.PathValue("id"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Subscription returns the record of a live subscription.
func (s *Server) Subscription(id string) (Subscription, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sb, ok := s.subs[id]
	if !ok {
		return Subscription{}, false
	}
	return sb.Subscription, true
}

// Subscriptions returns every live subscription in creation order.
func (s *Server) Subscriptions() []Subscription {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Subscription, 0, len(s.subs))
	for _, id := range s.sortedIDs() {
		out = append(out, s.subs[id].Subscription)
	}
	return out
}

// SetStatus changes a subscription's status server-side (e.g. "paused",
// "expired").
func (s *Server) SetStatus(id, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sb, ok := s.subs[id]; ok {
		sb.Status = status
	}
}

// Delete removes a subscription server-side, as if deleted elsewhere.
func (s *Server) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs, id)
}

package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

type hook struct {
	id          int64
	active      bool
	events      []string
	url         string
	contentType string
	insecureSSL string
	secret      string
	createdAt   time.Time
	updatedAt   time.Time
}

type delivery struct {
	id          int64
	guid        string
	deliveredAt time.Time
	redelivery  bool
	status      string
	statusCode  int
	event       string
	action      string
}

// Hook is a repository hook as the fake stores it (Secret in clear, for
// tests that sign payloads).
type Hook struct {
	ID          int64
	Active      bool
	Events      []string
	URL         string
	ContentType string
	Secret      string
}

// Delivery describes a hook delivery to record. StatusCode 0 means 200.
type Delivery struct {
	GUID       string
	Event      string
	Action     string
	StatusCode int
}

// Redelivery is a recorded POST .../deliveries/DID/attempts.
type Redelivery struct {
	Repo       string
	HookID     int64
	DeliveryID int64
}

type hookConfig struct {
	URL         *string `json:"url"`
	ContentType *string `json:"content_type"`
	Secret      *string `json:"secret"`
	InsecureSSL any     `json:"insecure_ssl"`
}

type hookBody struct {
	Name         string      `json:"name"`
	Active       *bool       `json:"active"`
	Events       []string    `json:"events"`
	AddEvents    []string    `json:"add_events"`
	RemoveEvents []string    `json:"remove_events"`
	Config       *hookConfig `json:"config"`
}

// routeHooks serves /repos/o/r/hooks... (mu must be held). ok is false for
// a route the fake does not know.
func (s *Server) routeHooks(method string, rp *repo, p []string, q url.Values, body []byte) (reply, bool) {
	switch {
	case len(p) == 0 && method == http.MethodGet:
		out := []any{}
		for _, id := range rp.hookOrder {
			if h := rp.hooks[id]; h != nil {
				out = append(out, hookJSON(rp.name, h))
			}
		}
		return jsonReply(http.StatusOK, out), true
	case len(p) == 0 && method == http.MethodPost:
		return s.createHook(rp, body), true
	case len(p) == 0:
		return reply{}, false
	}
	id, err := strconv.ParseInt(p[0], 10, 64)
	if err != nil {
		return reply{}, false
	}
	h := rp.hooks[id]
	switch {
	case len(p) == 1 && (method == http.MethodGet || method == http.MethodPatch || method == http.MethodDelete) && h == nil:
		return notFound(), true
	case len(p) == 1 && method == http.MethodGet:
		return jsonReply(http.StatusOK, hookJSON(rp.name, h)), true
	case len(p) == 1 && method == http.MethodPatch:
		return s.patchHook(rp, h, body), true
	case len(p) == 1 && method == http.MethodDelete:
		delete(rp.hooks, id)
		return reply{status: http.StatusNoContent}, true
	case len(p) == 2 && p[1] == "deliveries" && method == http.MethodGet:
		if h == nil {
			return notFound(), true
		}
		return deliveryPage(rp.deliveries[id], fmt.Sprintf("/repos/%s/hooks/%d/deliveries", rp.name, id), q), true
	case len(p) == 4 && p[1] == "deliveries" && p[3] == "attempts" && method == http.MethodPost:
		did, err := strconv.ParseInt(p[2], 10, 64)
		if h == nil || err != nil || findDelivery(rp.deliveries[id], did) == nil {
			return notFound(), true
		}
		orig := findDelivery(rp.deliveries[id], did)
		now := s.tick()
		rp.deliveries[id] = append(rp.deliveries[id], &delivery{id: s.id(), guid: orig.guid, deliveredAt: now,
			redelivery: true, status: "OK", statusCode: 200, event: orig.event, action: orig.action})
		s.redeliveries = append(s.redeliveries, Redelivery{Repo: rp.name, HookID: id, DeliveryID: did})
		return jsonReply(http.StatusAccepted, map[string]any{}), true
	}
	return reply{}, false
}

func (s *Server) createHook(rp *repo, body []byte) reply {
	var b hookBody
	if json.Unmarshal(body, &b) != nil {
		return jsonReply(http.StatusBadRequest, msgBody("Problems parsing JSON"))
	}
	if b.Config == nil || b.Config.URL == nil || *b.Config.URL == "" {
		rep := msgBody("Validation Failed")
		rep["errors"] = []any{map[string]any{"resource": "Hook", "code": "custom", "message": "Config must contain URL for webhooks"}}
		return jsonReply(http.StatusUnprocessableEntity, rep)
	}
	now := s.tick()
	h := &hook{id: s.id(), active: true, events: b.Events, contentType: "form", insecureSSL: "0", createdAt: now, updatedAt: now}
	if len(h.events) == 0 {
		h.events = []string{"push"}
	}
	if b.Active != nil {
		h.active = *b.Active
	}
	applyConfig(h, b.Config)
	rp.hooks[h.id] = h
	rp.hookOrder = append(rp.hookOrder, h.id)
	return jsonReply(http.StatusCreated, hookJSON(rp.name, h))
}

func (s *Server) patchHook(rp *repo, h *hook, body []byte) reply {
	var b hookBody
	if json.Unmarshal(body, &b) != nil {
		return jsonReply(http.StatusBadRequest, msgBody("Problems parsing JSON"))
	}
	if b.Active != nil {
		h.active = *b.Active
	}
	if b.Events != nil {
		h.events = b.Events
	}
	for _, e := range b.AddEvents {
		if !contains(h.events, e) {
			h.events = append(h.events, e)
		}
	}
	for _, e := range b.RemoveEvents {
		out := h.events[:0]
		for _, x := range h.events {
			if x != e {
				out = append(out, x)
			}
		}
		h.events = out
	}
	applyConfig(h, b.Config)
	h.updatedAt = s.tick()
	return jsonReply(http.StatusOK, hookJSON(rp.name, h))
}

func applyConfig(h *hook, c *hookConfig) {
	if c == nil {
		return
	}
	if c.URL != nil {
		h.url = *c.URL
	}
	if c.ContentType != nil {
		h.contentType = *c.ContentType
	}
	if c.Secret != nil {
		h.secret = *c.Secret
	}
	if c.InsecureSSL != nil {
		h.insecureSSL = fmt.Sprint(c.InsecureSSL)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func findDelivery(ds []*delivery, id int64) *delivery {
	for _, d := range ds {
		if d.id == id {
			return d
		}
	}
	return nil
}

func hookJSON(repoName string, h *hook) map[string]any {
	cfg := map[string]any{"url": h.url, "content_type": h.contentType, "insecure_ssl": h.insecureSSL}
	if h.secret != "" {
		cfg["secret"] = "********"
	}
	base := fmt.Sprintf("%s/repos/%s/hooks/%d", apiRoot, repoName, h.id)
	return map[string]any{
		"type": "Repository", "id": h.id, "name": "web", "active": h.active, "events": h.events, "config": cfg,
		"updated_at": ts(h.updatedAt), "created_at": ts(h.createdAt), "url": base, "test_url": base + "/test",
		"ping_url": base + "/pings", "deliveries_url": base + "/deliveries",
		"last_response": map[string]any{"code": nil, "status": "unused", "message": nil},
	}
}

func deliveryJSON(d *delivery) map[string]any {
	return map[string]any{
		"id": d.id, "guid": d.guid, "delivered_at": ts(d.deliveredAt), "redelivery": d.redelivery, "duration": 0.1,
		"status": d.status, "status_code": d.statusCode, "event": d.event, "action": d.action,
		"installation_id": nil, "repository_id": nil,
	}
}

// Hooks returns the repository's live hooks, oldest first.
func (s *Server) Hooks(repoName string) []Hook {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repo(repoName)
	var out []Hook
	for _, id := range rp.hookOrder {
		if h := rp.hooks[id]; h != nil {
			out = append(out, Hook{ID: h.id, Active: h.active, Events: append([]string(nil), h.events...),
				URL: h.url, ContentType: h.contentType, Secret: h.secret})
		}
	}
	return out
}

// DeleteHook deletes a hook behind the client's back.
func (s *Server) DeleteHook(repoName string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.repo(repoName).hooks, id)
}

// AddDelivery records a delivery of the hook (a failed one when StatusCode
// is not 2xx) and returns its id.
func (s *Server) AddDelivery(repoName string, hookID int64, d Delivery) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repo(repoName)
	if d.StatusCode == 0 {
		d.StatusCode = http.StatusOK
	}
	if d.GUID == "" {
		d.GUID = fmt.Sprintf("00000000-0000-4000-8000-%012d", s.nextID+1)
	}
	st := "OK"
	if d.StatusCode < 200 || d.StatusCode >= 300 {
		st = fmt.Sprintf("Invalid HTTP Response: %d", d.StatusCode)
	}
	id := s.id()
	rp.deliveries[hookID] = append(rp.deliveries[hookID], &delivery{id: id, guid: d.GUID, deliveredAt: s.tick(),
		status: st, statusCode: d.StatusCode, event: d.Event, action: d.Action})
	return id
}

// Redeliveries returns the recorded redelivery requests.
func (s *Server) Redeliveries() []Redelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Redelivery(nil), s.redeliveries...)
}

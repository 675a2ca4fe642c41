package githubtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// route dispatches one authorized request (mu must be held).
func (s *Server) route(r *http.Request, path string, body []byte) reply {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	q := r.URL.Query()
	switch {
	case path == "/" || path == "":
		if r.Method != http.MethodGet {
			break
		}
		return jsonReply(http.StatusOK, map[string]any{"current_user_url": apiRoot + "/user", "repository_url": apiRoot + "/repos/{owner}/{repo}"})
	case len(parts) == 1 && parts[0] == "user" && r.Method == http.MethodGet:
		return jsonReply(http.StatusOK, userJSON(s.viewer))
	case len(parts) == 1 && parts[0] == "graphql" && r.Method == http.MethodPost:
		return s.graphql(body)
	case len(parts) >= 4 && parts[0] == "repos":
		return s.routeRepo(r.Method, parts[1]+"/"+parts[2], parts[3:], q, body)
	}
	return reply{status: http.StatusNotFound, body: []byte(`{"message":"Not Found"}`), unexpected: true}
}

// routeRepo serves /repos/{owner}/{repo}/... (mu must be held).
func (s *Server) routeRepo(method, name string, p []string, q url.Values, body []byte) reply {
	unexpected := reply{status: http.StatusNotFound, body: []byte(`{"message":"Not Found"}`), unexpected: true}
	rp := s.repos[strings.ToLower(name)] // owner/repo are case-insensitive on GitHub
	get := method == http.MethodGet
	switch {
	case p[0] == "pulls" && len(p) == 1 && get:
		if rp == nil {
			return notFound()
		}
		return s.listPulls(rp, q)
	case p[0] == "pulls" && len(p) == 2 && get:
		pr := pullOf(rp, p[1])
		if pr == nil {
			return notFound()
		}
		return jsonReply(http.StatusOK, pullJSON(name, pr, true))
	case p[0] == "pulls" && len(p) == 3 && p[2] == "reviews" && get:
		pr := pullOf(rp, p[1])
		if pr == nil {
			return notFound()
		}
		out := []any{}
		for _, rv := range page(rp.reviews[pr.number], q) {
			out = append(out, reviewJSON(name, pr.number, rv))
		}
		return jsonReply(http.StatusOK, out)
	case p[0] == "commits" && len(p) == 3 && p[2] == "check-runs" && get:
		if rp == nil {
			return notFound()
		}
		runs := []any{}
		for _, c := range page(rp.checkRuns[p[1]], q) {
			runs = append(runs, checkRunJSON(p[1], c))
		}
		return jsonReply(http.StatusOK, map[string]any{"total_count": len(rp.checkRuns[p[1]]), "check_runs": runs})
	case p[0] == "commits" && len(p) == 3 && p[2] == "status" && get:
		if rp == nil {
			return notFound()
		}
		return jsonReply(http.StatusOK, combinedStatus(p[1], rp.statuses[p[1]]))
	case p[0] == "issues" && len(p) == 3 && p[2] == "comments" && get:
		pr := pullOf(rp, p[1])
		if pr == nil {
			return notFound()
		}
		return s.listComments(rp, pr.number, q)
	case p[0] == "hooks":
		if rp == nil {
			return notFound()
		}
		if rep, ok := s.routeHooks(method, rp, p[1:], q, body); ok {
			return rep
		}
	}
	return unexpected
}

func pullOf(rp *repo, num string) *pull {
	if rp == nil {
		return nil
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return nil
	}
	return rp.pulls[n]
}

// page applies per_page (default 30, max 100) and page (1-based).
func page[T any](items []T, q url.Values) []T {
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	pg, _ := strconv.Atoi(q.Get("page"))
	pg = max(pg, 1)
	lo := (pg - 1) * per
	if lo >= len(items) {
		return nil
	}
	return items[lo:min(lo+per, len(items))]
}

// listPulls serves GET /repos/o/r/pulls?state=&sort=updated&direction=desc.
func (s *Server) listPulls(rp *repo, q url.Values) reply {
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var ps []*pull
	for _, p := range rp.pulls {
		if state == "all" || p.state == state {
			ps = append(ps, p)
		}
	}
	asc := q.Get("direction") == "asc"
	sortBy := q.Get("sort")
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		ka, kb := a.createdAt, b.createdAt
		if sortBy == "updated" {
			ka, kb = a.updatedAt, b.updatedAt
		}
		if !ka.Equal(kb) {
			return ka.Before(kb) == asc
		}
		return (a.number < b.number) == asc
	})
	out := []any{}
	for _, p := range page(ps, q) {
		out = append(out, pullJSON(rp.name, p, false))
	}
	return jsonReply(http.StatusOK, out)
}

// listComments serves GET /repos/o/r/issues/N/comments?since=.
func (s *Server) listComments(rp *repo, n int, q url.Values) reply {
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return jsonReply(http.StatusUnprocessableEntity, msgBody("Invalid since"))
		}
		since = t
	}
	var cs []*comment
	for _, c := range rp.comments[n] {
		if !c.updatedAt.Before(since) {
			cs = append(cs, c)
		}
	}
	out := []any{}
	for _, c := range page(cs, q) {
		out = append(out, commentJSON(rp.name, n, c))
	}
	return jsonReply(http.StatusOK, out)
}

// combinedStatus renders GET /commits/SHA/status: the worst state wins.
func combinedStatus(sha string, sts []*status) map[string]any {
	state := "success"
	if len(sts) == 0 {
		state = "pending"
	}
	list := []any{}
	for _, st := range sts {
		switch {
		case st.state == "failure" || st.state == "error":
			state = "failure"
		case st.state == "pending" && state != "failure":
			state = "pending"
		}
		list = append(list, map[string]any{"id": st.id, "context": st.context, "state": st.state,
			"description": "", "target_url": nil, "created_at": ts(st.createdAt), "updated_at": ts(st.updatedAt)})
	}
	return map[string]any{"state": state, "sha": sha, "total_count": len(sts), "statuses": list}
}

// graphql serves gh's UserCurrent query (gh auth status); any other query
// is unexpected and answered with GraphQL errors, never an empty object.
func (s *Server) graphql(body []byte) reply {
	var req struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(body, &req)
	if strings.Contains(req.Query, "UserCurrent") || strings.Contains(strings.ReplaceAll(req.Query, " ", ""), "viewer{login}") {
		return jsonReply(http.StatusOK, map[string]any{"data": map[string]any{"viewer": map[string]any{"login": s.viewer}}})
	}
	rep := jsonReply(http.StatusOK, map[string]any{"data": nil, "errors": []any{map[string]any{"message": "githubtest: unsupported GraphQL query"}}})
	rep.unexpected = true
	return rep
}

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
	case len(parts) >= 3 && parts[0] == "repositories":
		// The form GitHub's Link headers use: /repositories/{id}/...
		if rp := s.repoByID(parts[1]); rp != nil {
			return s.routeRepo(r.Method, rp.name, parts[2:], q, body)
		}
		return notFound()
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
		return s.listPulls(rp, p, q)
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
		revs, pi := paginate(rp.reviews[pr.number], q) // oldest first, as GitHub lists them
		for _, rv := range revs {
			out = append(out, reviewJSON(rp.name, pr.number, rv))
		}
		return paged(jsonReply(http.StatusOK, out), rp, p, pi)
	case p[0] == "pulls" && len(p) == 3 && p[2] == "comments" && get:
		pr := pullOf(rp, p[1])
		if pr == nil {
			return notFound()
		}
		return s.listReviewComments(rp, pr, 0, p, q)
	case p[0] == "pulls" && len(p) == 5 && p[2] == "reviews" && p[4] == "comments" && get:
		pr := pullOf(rp, p[1])
		rid, err := strconv.ParseInt(p[3], 10, 64)
		if pr == nil || err != nil || !hasReview(rp, pr.number, rid) {
			return notFound()
		}
		return s.listReviewComments(rp, pr, rid, p, q)
	case p[0] == "commits" && len(p) == 3 && p[2] == "pulls" && get:
		if rp == nil {
			return notFound()
		}
		out := []any{}
		var nums []int
		for n, pr := range rp.pulls {
			if pr.head == p[1] && pr.state == "open" {
				nums = append(nums, n)
			}
		}
		sort.Ints(nums)
		for _, n := range nums {
			out = append(out, pullJSON(rp.name, rp.pulls[n], false))
		}
		return jsonReply(http.StatusOK, out)
	case p[0] == "actions" && len(p) == 3 && p[1] == "jobs" && get:
		if rp == nil {
			return notFound()
		}
		id, err := strconv.ParseInt(p[2], 10, 64)
		if err != nil {
			return notFound()
		}
		for sha, crs := range rp.checkRuns {
			for _, c := range crs {
				if c.id == id {
					return jsonReply(http.StatusOK, jobJSON(rp.name, sha, c))
				}
			}
		}
		return notFound()
	case p[0] == "commits" && len(p) == 3 && p[2] == "check-runs" && get:
		if rp == nil {
			return notFound()
		}
		runs := []any{}
		crs, pi := paginate(rp.checkRuns[p[1]], q)
		for _, c := range crs {
			runs = append(runs, checkRunJSON(p[1], c))
		}
		return paged(jsonReply(http.StatusOK, map[string]any{"total_count": len(rp.checkRuns[p[1]]), "check_runs": runs}), rp, p, pi)
	case p[0] == "commits" && len(p) == 3 && p[2] == "status" && get:
		if rp == nil {
			return notFound()
		}
		sts, pi := paginate(rp.statuses[p[1]], q)
		return paged(jsonReply(http.StatusOK, combinedStatus(p[1], rp.statuses[p[1]], sts)), rp, p, pi)
	case p[0] == "issues" && len(p) == 3 && p[2] == "comments" && get:
		pr := pullOf(rp, p[1])
		if pr == nil {
			return notFound()
		}
		return s.listComments(rp, pr.number, p, q)
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

// repoByID finds a repository by its numeric id (mu must be held).
func (s *Server) repoByID(id string) *repo {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	for _, rp := range s.repos {
		if rp.id == n {
			return rp
		}
	}
	return nil
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

// listPulls serves GET /repos/o/r/pulls?state=&sort=updated&direction=desc.
func (s *Server) listPulls(rp *repo, p []string, q url.Values) reply {
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
	items, pi := paginate(ps, q)
	for _, pr := range items {
		out = append(out, pullJSON(rp.name, pr, false))
	}
	return paged(jsonReply(http.StatusOK, out), rp, p, pi)
}

// listComments serves GET /repos/o/r/issues/N/comments?since=.
func (s *Server) listComments(rp *repo, n int, p []string, q url.Values) reply {
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
	items, pi := paginate(cs, q)
	for _, c := range items {
		out = append(out, commentJSON(rp.name, n, c))
	}
	return paged(jsonReply(http.StatusOK, out), rp, p, pi)
}

// combinedStatus renders GET /commits/SHA/status: the worst state of all
// the contexts wins; the page lists the contexts of this page.
func combinedStatus(sha string, all, pageSts []*status) map[string]any {
	state := "success"
	if len(all) == 0 {
		state = "pending"
	}
	for _, st := range all {
		switch {
		case st.state == "failure" || st.state == "error":
			state = "failure"
		case st.state == "pending" && state != "failure":
			state = "pending"
		}
	}
	list := []any{}
	for _, st := range pageSts {
		list = append(list, map[string]any{"id": st.id, "context": st.context, "state": st.state,
			"description": "", "target_url": nil, "created_at": ts(st.createdAt), "updated_at": ts(st.updatedAt)})
	}
	return map[string]any{"state": state, "sha": sha, "total_count": len(all), "statuses": list}
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

func hasReview(rp *repo, n int, id int64) bool {
	for _, r := range rp.reviews[n] {
		if r.id == id {
			return true
		}
	}
	return false
}

// listReviewComments serves GET /repos/o/r/pulls/N/comments (?since=,
// ?sort=created|updated, ?direction=asc|desc; GitHub's default is created,
// ascending) and, with reviewID > 0, GET .../reviews/ID/comments.
func (s *Server) listReviewComments(rp *repo, pr *pull, reviewID int64, p []string, q url.Values) reply {
	var since time.Time
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return jsonReply(http.StatusUnprocessableEntity, msgBody("Invalid since"))
		}
		since = t
	}
	var cs []*reviewComment
	for _, c := range rp.reviewComments[pr.number] {
		if (reviewID == 0 || c.reviewID == reviewID) && !c.updatedAt.Before(since) {
			cs = append(cs, c)
		}
	}
	if q.Get("sort") == "updated" {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].updatedAt.Before(cs[j].updatedAt) })
	}
	if q.Get("direction") == "desc" {
		for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
			cs[i], cs[j] = cs[j], cs[i]
		}
	}
	out := []any{}
	items, pi := paginate(cs, q)
	for _, c := range items {
		out = append(out, reviewCommentJSON(rp.name, pr.number, c))
	}
	return paged(jsonReply(http.StatusOK, out), rp, p, pi)
}

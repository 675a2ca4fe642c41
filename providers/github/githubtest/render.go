package githubtest

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

const apiRoot = "https://api.github.com"

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func tsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// userJSON renders an account; a login ending in "[bot]" is a Bot.
func userJSON(login string) any {
	if login == "" {
		return nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(login))
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "id": int64(h.Sum32()), "node_id": "U_" + login, "type": typ,
		"site_admin": false, "url": apiRoot + "/users/" + login, "html_url": "https://github.com/" + login}
}

// pullJSON renders a PR; full adds the fields only the single-PR endpoint
// has (merged, merged_by, mergeable, comments...).
func pullJSON(repoName string, p *pull, full bool) map[string]any {
	headRepo := repoName
	if p.headRepo != "" {
		headRepo = p.headRepo
	}
	m := map[string]any{
		"url":                apiRoot + "/repos/" + repoName + "/pulls/" + fmt.Sprint(p.number),
		"id":                 int64(p.number) * 7919,
		"node_id":            fmt.Sprintf("PR_fake_%d", p.number),
		"html_url":           fmt.Sprintf("https://github.com/%s/pull/%d", repoName, p.number),
		"number":             p.number,
		"state":              p.state,
		"locked":             false,
		"title":              p.title,
		"user":               userJSON(p.author),
		"body":               "",
		"created_at":         ts(p.createdAt),
		"updated_at":         ts(p.updatedAt),
		"closed_at":          tsPtr(p.closedAt),
		"merged_at":          tsPtr(p.mergedAt),
		"merge_commit_sha":   nil,
		"draft":              p.draft,
		"author_association": p.association,
		"head": map[string]any{"label": p.author + ":" + p.headRef, "ref": p.headRef, "sha": p.head,
			"user": userJSON(p.author), "repo": repoJSON(headRepo)},
		"base": map[string]any{"label": "main", "ref": "main", "sha": SHA("base"), "repo": repoJSON(repoName)},
	}
	if full {
		m["merged"] = p.mergedAt != nil
		m["merged_by"] = userJSON(p.mergedBy)
		m["mergeable"] = nil
		m["comments"] = 0
		m["review_comments"] = 0
		m["commits"] = 1
	}
	return m
}

func reviewJSON(repoName string, n int, r *review) map[string]any {
	return map[string]any{
		"id": r.id, "node_id": fmt.Sprintf("PRR_fake_%d", r.id), "user": userJSON(r.user), "body": r.body,
		"state": r.state, "html_url": fmt.Sprintf("https://github.com/%s/pull/%d#pullrequestreview-%d", repoName, n, r.id),
		"pull_request_url":   fmt.Sprintf("%s/repos/%s/pulls/%d", apiRoot, repoName, n),
		"author_association": r.association, "submitted_at": ts(r.submittedAt), "commit_id": r.commit,
	}
}

func checkRunJSON(sha string, c *checkRun) map[string]any {
	var concl any
	if c.conclusion != "" && c.status == "completed" {
		concl = c.conclusion
	}
	return map[string]any{
		"id": c.id, "head_sha": sha, "name": c.name, "status": c.status, "conclusion": concl,
		"started_at": ts(c.startedAt), "completed_at": tsPtr(c.completedAt),
		"details_url": fmt.Sprintf("https://example.invalid/run/%d", c.id),
		"app":         map[string]any{"id": 15368, "slug": "github-actions", "name": "GitHub Actions"},
		"check_suite": map[string]any{"id": c.id * 3},
	}
}

func commentJSON(repoName string, n int, c *comment) map[string]any {
	return map[string]any{
		"id": c.id, "node_id": fmt.Sprintf("IC_fake_%d", c.id), "user": userJSON(c.user), "body": c.body,
		"html_url":   fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", repoName, n, c.id),
		"issue_url":  fmt.Sprintf("%s/repos/%s/issues/%d", apiRoot, repoName, n),
		"created_at": ts(c.createdAt), "updated_at": ts(c.updatedAt), "author_association": c.association,
	}
}

// repoJSON renders the repository a PR's head or base names.
func repoJSON(name string) map[string]any {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(name)))
	owner, _, _ := strings.Cut(name, "/")
	return map[string]any{"id": int64(h.Sum32()), "full_name": name, "name": name[strings.IndexByte(name, '/')+1:],
		"owner": userJSON(owner), "url": apiRoot + "/repos/" + name}
}

func reviewCommentJSON(repoName string, n int, c *reviewComment) map[string]any {
	var line, inReply any
	if c.line > 0 {
		line = c.line
	}
	if c.inReplyTo > 0 {
		inReply = c.inReplyTo
	}
	m := map[string]any{
		"id": c.id, "node_id": fmt.Sprintf("PRRC_fake_%d", c.id), "pull_request_review_id": c.reviewID,
		"diff_hunk": c.diffHunk, "path": c.path, "commit_id": c.commit, "original_commit_id": c.commit,
		"user": userJSON(c.user), "body": c.body, "created_at": ts(c.createdAt), "updated_at": ts(c.updatedAt),
		"html_url":           fmt.Sprintf("https://github.com/%s/pull/%d#discussion_r%d", repoName, n, c.id),
		"pull_request_url":   fmt.Sprintf("%s/repos/%s/pulls/%d", apiRoot, repoName, n),
		"author_association": c.association, "start_line": nil, "original_start_line": nil, "start_side": nil,
		"line": line, "original_line": max(c.line, 1), "side": "RIGHT", "subject_type": "line",
	}
	if inReply != nil {
		m["in_reply_to_id"] = inReply
	}
	return m
}

// jobJSON renders a check run as the GitHub Actions job it is.
func jobJSON(repoName, sha string, c *checkRun) map[string]any {
	var concl any
	if c.conclusion != "" && c.status == "completed" {
		concl = c.conclusion
	}
	steps := []any{}
	for i, st := range c.steps {
		var sc any
		status := "in_progress"
		if st.Conclusion != "" {
			sc, status = st.Conclusion, "completed"
		}
		steps = append(steps, map[string]any{"name": st.Name, "status": status, "conclusion": sc, "number": i + 1})
	}
	return map[string]any{
		"id": c.id, "run_id": c.id * 3, "run_attempt": 1, "head_sha": sha, "name": c.name, "status": c.status,
		"conclusion": concl, "workflow_name": "CI", "steps": steps, "labels": []string{"ubuntu-latest"},
		"html_url":   fmt.Sprintf("https://github.com/%s/actions/runs/%d/job/%d", repoName, c.id*3, c.id),
		"started_at": ts(c.startedAt), "completed_at": tsPtr(c.completedAt), "runner_name": "GitHub Actions 1",
	}
}

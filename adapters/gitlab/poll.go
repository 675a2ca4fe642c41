package gitlab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// cursorVersion is the version of the cursor's shape.
const cursorVersion = 1

// maxTracked caps the merge requests a project cursor remembers (the
// least recently updated are forgotten first).
const maxTracked = 500

// cursor is all poll state of one sentinel, JSON in the handle's cursor.
type cursor struct {
	V     int               `json:"v"`
	Base  bool              `json:"base"`
	ETags map[string]string `json:"etags,omitempty"`
	// Merge request scope.
	MR        *mrSnap         `json:"mr,omitempty"`
	LastNote  int64           `json:"lastNote,omitempty"`
	Pipes     map[string]bool `json:"pipes,omitempty"` // "<id>:<status>" reported for the head
	Approvers []string        `json:"approvers,omitempty"`
	// Project scope: the merge requests seen, by iid.
	MRs map[string]mrSnap `json:"mrs,omitempty"`
}

// mrSnap is what a diff compares of a merge request.
type mrSnap struct {
	State     string `json:"state"`
	SHA       string `json:"sha"`
	UpdatedAt string `json:"updatedAt"`
}

type user struct {
	Username string `json:"username"`
}

type mergeRequest struct {
	IID       int    `json:"iid"`
	Title     string `json:"title"`
	State     string `json:"state"`
	SHA       string `json:"sha"`
	UpdatedAt string `json:"updated_at"`
	MergedAt  string `json:"merged_at"`
	ClosedAt  string `json:"closed_at"`
	WebURL    string `json:"web_url"`
	Author    *user  `json:"author"`
	MergedBy  *user  `json:"merged_by"`
	ClosedBy  *user  `json:"closed_by"`
}

type note struct {
	ID        int64  `json:"id"`
	Body      string `json:"body"`
	System    bool   `json:"system"`
	CreatedAt string `json:"created_at"`
	Author    *user  `json:"author"`
}

type pipeline struct {
	ID     int64  `json:"id"`
	SHA    string `json:"sha"`
	Status string `json:"status"`
	WebURL string `json:"web_url"`
}

type approvals struct {
	ApprovedBy []struct {
		User user `json:"user"`
	} `json:"approved_by"`
}

// poller is one poll of one sentinel.
type poller struct {
	c      *client
	ref    Ref
	cur    cursor
	limit  int
	now    time.Time
	events []sentinel.Event
}

func parseCursor(raw string) (cursor, error) {
	c := cursor{V: cursorVersion}
	if raw == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil || c.V != cursorVersion {
		return cursor{V: cursorVersion}, kit.Errorf(kit.ReasonInvalid, "the cursor is not this adapter's (re-create the sentinel)")
	}
	return c, nil
}

func (c cursor) encode() string {
	raw, _ := json.Marshal(c)
	return string(raw)
}

// room is how many more events this poll may return.
func (p *poller) room() int { return p.limit - len(p.events) }

// emit adds an event (during the baseline, nothing is reported).
func (p *poller) emit(typ, key, subject string, subjects []string, at, summary string, terminal bool, data map[string]any) {
	if !p.cur.Base {
		return
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		t = p.now
	}
	sum := sha256.Sum256([]byte(subject + "|" + typ + "|" + key))
	id := "evt_gl_" + hex.EncodeToString(sum[:16])
	source := p.c.base.String() + "/" + p.ref.Project
	p.events = append(p.events, sentinel.NewEvent(id, source, typ, subject, subjects, t, clipRunes(summary, 300), terminal, data))
}

// etag returns the stored ETag of path.
func (p *poller) etag(path string) string { return p.cur.ETags[path] }

// keepETag stores the ETag of path (only once what it answered is fully
// reported: a 304 later must not hide anything).
func (p *poller) keepETag(path, etag string) {
	if p.cur.ETags == nil {
		p.cur.ETags = map[string]string{}
	}
	if etag == "" {
		delete(p.cur.ETags, path)
		return
	}
	p.cur.ETags[path] = etag
}

// pollMR diffs one merge request: its state and head, its notes, its
// approvals and the pipelines of its head.
func (p *poller) pollMR(ctx context.Context) error {
	base := fmt.Sprintf("%s/merge_requests/%d", projectPath(p.ref.Project), p.ref.IID)
	var mr mergeRequest
	tag, same, err := p.c.get(ctx, base, p.etag(base), &mr)
	if err != nil {
		return err
	}
	if !same {
		p.diffMR(p.ref, p.cur.MR, mr)
		snap := mrSnap{State: mr.State, SHA: mr.SHA, UpdatedAt: mr.UpdatedAt}
		if p.cur.MR != nil && p.cur.MR.SHA != mr.SHA {
			p.cur.Pipes = nil // a new head: its pipelines are new
		}
		p.cur.MR = &snap
		p.keepETag(base, tag)
	}
	if err := p.pollNotes(ctx, base); err != nil {
		return err
	}
	if err := p.pollApprovals(ctx, base); err != nil {
		return err
	}
	return p.pollPipelines(ctx, base)
}

// diffMR reports a merge request's state and head changes since prev.
func (p *poller) diffMR(ref Ref, prev *mrSnap, mr mergeRequest) {
	if prev == nil {
		return
	}
	subj, subjects := ref.Subject(), ref.Subjects()
	data := map[string]any{"project": ref.Project, "iid": ref.IID, "title": clipRunes(mr.Title, 500), "url": mr.WebURL, "state": mr.State}
	title := clipRunes(oneLine(mr.Title), 200)
	switch {
	case prev.State != "merged" && mr.State == "merged":
		by := name(mr.MergedBy)
		data["mergedBy"] = by
		p.emit("gitlab.merge_request.merged", "merged|"+mr.MergedAt, subj, subjects, mr.MergedAt,
			fmt.Sprintf("!%d merged by %s: %s", ref.IID, by, title), true, data)
	case prev.State != "closed" && mr.State == "closed":
		by := name(mr.ClosedBy)
		data["closedBy"] = by
		p.emit("gitlab.merge_request.closed", "closed|"+mr.ClosedAt, subj, subjects, mr.ClosedAt,
			fmt.Sprintf("!%d closed by %s: %s", ref.IID, by, title), true, data)
	case prev.State == "closed" && mr.State == "opened":
		p.emit("gitlab.merge_request.reopened", "reopened|"+mr.UpdatedAt, subj, subjects, mr.UpdatedAt,
			fmt.Sprintf("!%d reopened: %s", ref.IID, title), false, data)
	}
	if mr.State == "opened" && prev.SHA != "" && mr.SHA != prev.SHA {
		data["headSha"] = mr.SHA
		p.emit("gitlab.merge_request.updated", "sha|"+mr.SHA, subj, subjects, mr.UpdatedAt,
			fmt.Sprintf("!%d has new commits (%s): %s", ref.IID, short(mr.SHA), title), false, data)
	}
}

// pollNotes reports the new human notes (system notes are GitLab's own
// bookkeeping), oldest first, as many as the poll has room for.
func (p *poller) pollNotes(ctx context.Context, base string) error {
	path := base + "/notes?order_by=created_at&sort=desc&per_page=100"
	var notes []note
	tag, same, err := p.c.get(ctx, path, p.etag(path), &notes)
	if err != nil || same {
		return err
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].ID < notes[j].ID })
	all := true
	for _, n := range notes {
		if n.ID <= p.cur.LastNote {
			continue
		}
		if p.cur.Base && p.room() <= 0 {
			all = false
			break
		}
		p.cur.LastNote = n.ID
		if n.System {
			continue
		}
		who := name(n.Author)
		p.emit("gitlab.note.created", "note|"+strconv.FormatInt(n.ID, 10), p.ref.Subject(), p.ref.Subjects(), n.CreatedAt,
			fmt.Sprintf("%s commented on !%d: %s", who, p.ref.IID, clipRunes(oneLine(n.Body), 200)), false,
			map[string]any{"project": p.ref.Project, "iid": p.ref.IID, "noteId": n.ID, "author": who, "body": clipRunes(n.Body, 4000)})
	}
	if all {
		p.keepETag(path, tag)
	}
	return nil
}

// pollApprovals reports approvals given and revoked.
func (p *poller) pollApprovals(ctx context.Context, base string) error {
	path := base + "/approvals"
	var a approvals
	tag, same, err := p.c.get(ctx, path, p.etag(path), &a)
	if err != nil || same {
		return err
	}
	now := []string{}
	for _, x := range a.ApprovedBy {
		now = append(now, x.User.Username)
	}
	sort.Strings(now)
	had := map[string]bool{}
	for _, u := range p.cur.Approvers {
		had[u] = true
	}
	has := map[string]bool{}
	stamp := sentinel.FormatTime(p.now)
	for _, u := range now {
		has[u] = true
		if !had[u] {
			p.emit("gitlab.approval.approved", "approved|"+u+"|"+p.headKey(), p.ref.Subject(), p.ref.Subjects(), stamp,
				fmt.Sprintf("%s approved !%d", u, p.ref.IID), false, map[string]any{"project": p.ref.Project, "iid": p.ref.IID, "user": u})
		}
	}
	for _, u := range p.cur.Approvers {
		if !has[u] {
			p.emit("gitlab.approval.revoked", "revoked|"+u+"|"+p.headKey(), p.ref.Subject(), p.ref.Subjects(), stamp,
				fmt.Sprintf("%s revoked their approval of !%d", u, p.ref.IID), false, map[string]any{"project": p.ref.Project, "iid": p.ref.IID, "user": u})
		}
	}
	p.cur.Approvers = now
	p.keepETag(path, tag)
	return nil
}

// headKey ties approval ids to the head commit (an approval reset by a
// push and given again is a new event).
func (p *poller) headKey() string {
	if p.cur.MR == nil {
		return ""
	}
	return p.cur.MR.SHA
}

// finished are the pipeline statuses that end it.
var finished = map[string]bool{"success": true, "failed": true, "canceled": true, "skipped": true}

// pollPipelines reports the head's pipelines that finished since the last
// poll as one event with the worst-of rollup.
func (p *poller) pollPipelines(ctx context.Context, base string) error {
	if p.cur.MR == nil || p.cur.MR.SHA == "" {
		return nil
	}
	path := base + "/pipelines"
	var pipes []pipeline
	tag, same, err := p.c.get(ctx, path, p.etag(path), &pipes)
	if err != nil || same {
		return err
	}
	if p.cur.Pipes == nil {
		p.cur.Pipes = map[string]bool{}
	}
	var fresh []pipeline
	for _, pl := range pipes {
		key := strconv.FormatInt(pl.ID, 10) + ":" + pl.Status
		if pl.SHA != p.cur.MR.SHA || !finished[pl.Status] || p.cur.Pipes[key] {
			continue
		}
		p.cur.Pipes[key] = true
		fresh = append(fresh, pl)
	}
	p.keepETag(path, tag)
	if len(fresh) == 0 {
		return nil
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].ID < fresh[j].ID })
	conclusion := Rollup(fresh)
	var keys, list []string
	items := make([]map[string]any, 0, len(fresh))
	for _, pl := range fresh {
		keys = append(keys, strconv.FormatInt(pl.ID, 10)+":"+pl.Status)
		list = append(list, "#"+strconv.FormatInt(pl.ID, 10)+" "+pl.Status)
		items = append(items, map[string]any{"id": pl.ID, "status": pl.Status, "url": pl.WebURL})
	}
	p.emit("gitlab.pipeline.completed", "pipes|"+p.cur.MR.SHA+"|"+strings.Join(keys, ","), p.ref.Subject(), p.ref.Subjects(), sentinel.FormatTime(p.now),
		fmt.Sprintf("pipelines of !%d (%s): %s — %s", p.ref.IID, short(p.cur.MR.SHA), conclusion, strings.Join(list, ", ")), false,
		map[string]any{"project": p.ref.Project, "iid": p.ref.IID, "headSha": p.cur.MR.SHA, "conclusion": conclusion, "pipelines": items})
	return nil
}

// Rollup is the worst-of conclusion of finished pipelines: failure when
// any failed or was canceled, success when every one succeeded or was
// skipped, else neutral.
func Rollup(pipes []pipeline) string {
	ok := true
	for _, pl := range pipes {
		switch pl.Status {
		case "failed", "canceled":
			return "failure"
		case "success", "skipped":
		default:
			ok = false
		}
	}
	if ok {
		return "success"
	}
	return "neutral"
}

// pollProject diffs the project's most recently updated merge requests.
func (p *poller) pollProject(ctx context.Context) error {
	path := projectPath(p.ref.Project) + "/merge_requests?state=all&order_by=updated_at&sort=desc&per_page=50"
	var mrs []mergeRequest
	tag, same, err := p.c.get(ctx, path, p.etag(path), &mrs)
	if err != nil || same {
		return err
	}
	if p.cur.MRs == nil {
		p.cur.MRs = map[string]mrSnap{}
	}
	sort.Slice(mrs, func(i, j int) bool { return mrs[i].UpdatedAt < mrs[j].UpdatedAt })
	all := true
	for _, mr := range mrs {
		k := strconv.Itoa(mr.IID)
		snap := mrSnap{State: mr.State, SHA: mr.SHA, UpdatedAt: mr.UpdatedAt}
		prev, known := p.cur.MRs[k]
		if known && prev == snap {
			continue
		}
		if p.cur.Base && p.room() < 2 {
			all = false
			break
		}
		ref := Ref{Project: p.ref.Project, IID: mr.IID}
		if known {
			p.diffMR(ref, &prev, mr)
		} else if p.cur.Base {
			p.emit("gitlab.merge_request.updated", "opened|"+k+"|"+mr.SHA, ref.Subject(), ref.Subjects(), mr.UpdatedAt,
				fmt.Sprintf("!%d opened by %s: %s", mr.IID, name(mr.Author), clipRunes(oneLine(mr.Title), 200)), false,
				map[string]any{"project": ref.Project, "iid": mr.IID, "title": clipRunes(mr.Title, 500), "url": mr.WebURL, "state": mr.State, "action": "opened"})
		}
		p.cur.MRs[k] = snap
	}
	forget(p.cur.MRs, maxTracked)
	if all {
		p.keepETag(path, tag)
	}
	return nil
}

// forget drops the least recently updated entries past n.
func forget(m map[string]mrSnap, n int) {
	if len(m) <= n {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]].UpdatedAt < m[keys[j]].UpdatedAt })
	for _, k := range keys[:len(m)-n] {
		delete(m, k)
	}
}

func name(u *user) string {
	if u == nil || u.Username == "" {
		return "someone"
	}
	return u.Username
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

// oneLine folds text onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clipRunes clips s to n runes with an ellipsis.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

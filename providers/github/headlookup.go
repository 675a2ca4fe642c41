package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Bounds of the head lookup's memory.
const (
	// maxHeads bounds the (repository, commit) entries kept, oldest
	// evicted first.
	maxHeads = 4096
	// headsFresh is how long GitHub's answer naming a commit's PRs is
	// trusted without asking again; headsNone how long an answer naming
	// none is (a fork PR may be opened for the commit meanwhile). Asking
	// again is conditional: an unchanged answer is a 304, free of quota.
	headsFresh = 10 * time.Minute
	headsNone  = time.Minute
	// lookupTimeout bounds one question to GitHub at ingress: GitHub gives
	// a delivery 10 s, and a delivery it times out is redelivered by
	// reconciliation anyway.
	lookupTimeout = 5 * time.Second
)

// headerRunner is an APICaller that can send extra request headers
// (Runner and Client both can): the head lookup asks conditionally
// through it.
type headerRunner interface {
	APIWithHeader(ctx context.Context, method, path string, extra http.Header, body []byte) (int, http.Header, []byte, error)
}

// CallerFor returns the APICaller whose credential may read repo (an App
// installation's client, say). An error a *providers.Error marks not
// retryable leaves the event at the repository; any other fails the
// delivery for now (a *LookupError).
type CallerFor func(ctx context.Context, repo sentinel.GitHubRef) (APICaller, error)

// HeadLookup is the WebhookLookup over REST that the webhook and
// github-app providers share: it maps a commit to the open PRs whose head
// it is, from what pull_request deliveries told it and else from GitHub
// (GET /repos/{o}/{r}/commits/{sha}/pulls, cached and conditional), and
// lists a review's inline comments. It is per process: in a cluster a
// node that did not see a PR's pull_request event asks GitHub once. Safe
// for concurrent use.
type HeadLookup struct {
	callerFor CallerFor
	now       func() time.Time

	mu    sync.Mutex
	heads map[string]*headEntry
	order []string
	// current maps "repo#n" to the head sha a pull_request event last
	// named, so a new head takes the PR off the old one.
	current map[string]string
}

// headEntry is what is known of one commit of one repository.
type headEntry struct {
	// prs maps a PR number to its head repository (lower case; "" when
	// unknown).
	prs map[int]string
	// etag and fetched: GitHub's last answer for the commit (fetched zero:
	// only pull_request events told of it).
	etag    string
	fetched time.Time
}

// NewHeadLookup returns a lookup asking GitHub through run, one credential
// for every repository (gh, or a token's Client). now nil is time.Now.
func NewHeadLookup(run APICaller, now func() time.Time) *HeadLookup {
	return NewHeadLookupFor(func(context.Context, sentinel.GitHubRef) (APICaller, error) { return run, nil }, now)
}

// NewHeadLookupFor returns a lookup asking GitHub, for each repository,
// through the caller callerFor gives for it (an App asks with the
// installation covering the repository). now nil is time.Now.
func NewHeadLookupFor(callerFor CallerFor, now func() time.Time) *HeadLookup {
	if now == nil {
		now = time.Now
	}
	return &HeadLookup{callerFor: callerFor, now: now, heads: map[string]*headEntry{}, current: map[string]string{}}
}

func headKey(repo sentinel.GitHubRef, sha string) string {
	return strings.ToLower(repo.FullName()) + "@" + sha
}

// entry returns (creating) the entry of key (mu must be held).
func (l *HeadLookup) entry(key string) *headEntry {
	e := l.heads[key]
	if e == nil {
		e = &headEntry{prs: map[int]string{}}
		l.heads[key] = e
		l.order = append(l.order, key)
		for len(l.order) > maxHeads {
			delete(l.heads, l.order[0])
			l.order = l.order[1:]
		}
	}
	return e
}

// ObserveHead implements WebhookLookup.
func (l *HeadLookup) ObserveHead(repo sentinel.GitHubRef, number int, headRepo, sha string, open bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pr := strings.ToLower(repo.FullName()) + "#" + strconv.Itoa(number)
	if prev, ok := l.current[pr]; ok && (prev != sha || !open) {
		if e := l.heads[headKey(repo, prev)]; e != nil {
			delete(e.prs, number)
		}
		delete(l.current, pr)
	}
	if !open {
		return
	}
	l.entry(headKey(repo, sha)).prs[number] = strings.ToLower(headRepo)
	l.current[pr] = sha
	if len(l.current) > maxHeads {
		for k := range l.current { // drop an arbitrary one: only an optimisation
			delete(l.current, k)
			break
		}
	}
}

// PullsForHead implements WebhookLookup: what pull_request events told
// first, else GitHub's answer (cached: headsFresh when it named PRs,
// headsNone when it named none; asked again with If-None-Match). Only open
// PRs of repo whose head is sha count, and, when headRepo is known, whose
// head repository is headRepo.
func (l *HeadLookup) PullsForHead(ctx context.Context, repo sentinel.GitHubRef, headRepo, sha string) ([]int, error) {
	key := headKey(repo, sha)
	now := l.now()
	l.mu.Lock()
	e := l.heads[key]
	var etag string
	if e != nil {
		if got := matching(e.prs, headRepo); len(got) > 0 && (e.fetched.IsZero() || now.Sub(e.fetched) < headsFresh) {
			l.mu.Unlock()
			return got, nil
		}
		if !e.fetched.IsZero() && len(e.prs) == 0 && now.Sub(e.fetched) < headsNone {
			l.mu.Unlock()
			return nil, nil
		}
		etag = e.etag
	}
	l.mu.Unlock()

	path := "repos/" + repo.FullName() + "/commits/" + sha + "/pulls?per_page=100"
	var extra http.Header
	if etag != "" {
		extra = http.Header{"If-None-Match": {etag}}
	}
	status, hdr, body, err := l.get(ctx, repo, path, extra)
	if err != nil {
		return nil, fmt.Errorf("look up the pull requests of %s@%s: %w", repo.FullName(), sha[:7], err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e = l.entry(key)
	e.fetched = now
	if status == http.StatusNotModified {
		return matching(e.prs, headRepo), nil
	}
	prs, err := pullsOfHead(body, repo, sha)
	if err != nil {
		return nil, err
	}
	e.prs = prs
	e.etag = hdr.Get("ETag")
	return matching(e.prs, headRepo), nil
}

// get makes one GET of repo's (bounded by lookupTimeout) with the caller
// for repo, conditional when that caller can send headers.
func (l *HeadLookup) get(ctx context.Context, repo sentinel.GitHubRef, path string, extra http.Header) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	run, err := l.callerFor(ctx, repo)
	if err != nil {
		return 0, nil, nil, err
	}
	if hr, ok := run.(headerRunner); ok && extra != nil {
		return hr.APIWithHeader(ctx, http.MethodGet, path, extra, nil)
	}
	return run.API(ctx, http.MethodGet, path, nil)
}

// pullsOfHead decodes GET .../commits/{sha}/pulls: the open PRs of repo
// whose head is sha, with their head repositories.
func pullsOfHead(body []byte, repo sentinel.GitHubRef, sha string) (map[int]string, error) {
	var list []struct {
		Number int    `json:"number"`
		State  string `json:"state"`
		Head   struct {
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"base"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, &providers.Error{Reason: providers.ReasonInvalid, Message: "look up pull requests of a commit: invalid JSON: " + err.Error()}
	}
	out := map[int]string{}
	for _, p := range list {
		if p.Number <= 0 || p.State != "open" || p.Head.SHA != sha {
			continue
		}
		if p.Base.Repo != nil && !strings.EqualFold(p.Base.Repo.FullName, repo.FullName()) {
			continue
		}
		hr := ""
		if p.Head.Repo != nil {
			hr = strings.ToLower(p.Head.Repo.FullName)
		}
		out[p.Number] = hr
	}
	return out, nil
}

// matching returns the PR numbers of prs whose head repository is
// headRepo (any, when headRepo or the PR's is unknown), sorted.
func matching(prs map[int]string, headRepo string) []int {
	var out []int
	for n, hr := range prs {
		if headRepo == "" || hr == "" || strings.EqualFold(hr, headRepo) {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// ReviewComments implements WebhookLookup: one page (100) of the review's
// inline comments, oldest first (a review event carries at most
// MaxReviewComments of them and counts the rest from the page).
func (l *HeadLookup) ReviewComments(ctx context.Context, repo sentinel.GitHubRef, number int, reviewID int64) ([]ReviewComment, error) {
	path := fmt.Sprintf("repos/%s/pulls/%d/reviews/%d/comments?per_page=100", repo.FullName(), number, reviewID)
	_, _, body, err := l.get(ctx, repo, path, nil)
	if err != nil {
		return nil, fmt.Errorf("list the comments of review %d of %s#%d: %w", reviewID, repo.FullName(), number, err)
	}
	var list []ReviewComment
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("list the comments of review %d of %s#%d: invalid JSON: %w", reviewID, repo.FullName(), number, err)
	}
	return list, nil
}

// Interface guards: the lookup serves the normalizer, and both runners
// the providers are given can ask conditionally.
var (
	_ WebhookLookup = (*HeadLookup)(nil)
	_ headerRunner  = (*Runner)(nil)
	_ headerRunner  = (*Client)(nil)
)

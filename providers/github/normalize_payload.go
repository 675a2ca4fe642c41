package github

import (
	"strings"

	"github.com/agentproto/sentinel"
)

// The payload types below decode only the fields the normalizer reads, so
// the rest of a (large) GitHub payload is skipped, whatever its shape.

// whUser is a GitHub account as webhook payloads embed it.
type whUser struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

// isBot reports whether the account is a bot (an App's bot user).
func (u *whUser) isBot() bool { return u != nil && IsBotAccount(u.Login, u.Type) }

// isGhost reports whether the account is GitHub's deleted-user stand-in.
func (u *whUser) isGhost() bool { return u != nil && IsGhost(u.Login) }

// whRepository is the payload's repository object.
type whRepository struct {
	ID       int64   `json:"id"`
	FullName string  `json:"full_name"`
	Name     string  `json:"name"`
	Owner    *whUser `json:"owner"`
}

// whCommon is what every supported event carries.
type whCommon struct {
	Action     string        `json:"action"`
	Repository *whRepository `json:"repository"`
	Sender     *whUser       `json:"sender"`
}

// repo resolves the repository: full_name split at the first '/', else
// owner.login plus name.
func (p *whCommon) repo() (sentinel.GitHubRef, error) {
	r := p.Repository
	if r == nil {
		return sentinel.GitHubRef{}, whErr(ReasonMissingRepository)
	}
	owner, name, ok := strings.Cut(r.FullName, "/")
	if !ok || owner == "" || name == "" {
		owner, name = "", r.Name
		if r.Owner != nil {
			owner = r.Owner.Login
		}
	}
	if owner == "" || name == "" {
		return sentinel.GitHubRef{}, whErr(ReasonMissingRepository)
	}
	ref, err := sentinel.ParseGitHubSubject("github:" + owner + "/" + name)
	if err != nil || ref.Number != 0 {
		return sentinel.GitHubRef{}, whErr(ReasonInvalidPayload)
	}
	return ref, nil
}

// whRepoName is a repository as a PR's head or base names it.
type whRepoName struct {
	ID       int64  `json:"id"`
	FullName string `json:"full_name"`
}

// whPull is a pull_request object.
type whPull struct {
	Number            int     `json:"number"`
	State             string  `json:"state"`
	Title             string  `json:"title"`
	HTMLURL           string  `json:"html_url"`
	Merged            *bool   `json:"merged"`
	User              *whUser `json:"user"`
	AuthorAssociation string  `json:"author_association"`
	Head              struct {
		SHA  string      `json:"sha"`
		Ref  string      `json:"ref"`
		Repo *whRepoName `json:"repo"`
	} `json:"head"`
	Base struct {
		Ref  string      `json:"ref"`
		Repo *whRepoName `json:"repo"`
	} `json:"base"`
}

// headRepo is the full name of the PR's head repository ("" when unknown
// or deleted).
func (p *whPull) headRepo() string {
	if p.Head.Repo == nil {
		return ""
	}
	return p.Head.Repo.FullName
}

// whPullRef is an entry of check_suite.pull_requests or
// workflow_run.pull_requests.
type whPullRef struct {
	Number int `json:"number"`
	Base   struct {
		Repo struct {
			ID int64 `json:"id"`
		} `json:"repo"`
	} `json:"base"`
}

// whPullRequestEvent is a pull_request delivery.
type whPullRequestEvent struct {
	Number      int     `json:"number"`
	Reason      string  `json:"reason"`
	PullRequest *whPull `json:"pull_request"`
}

// whReview is a pull_request_review's review.
type whReview struct {
	ID                int64   `json:"id"`
	State             string  `json:"state"`
	Body              *string `json:"body"`
	HTMLURL           string  `json:"html_url"`
	CommitID          string  `json:"commit_id"`
	User              *whUser `json:"user"`
	AuthorAssociation string  `json:"author_association"`
}

// whReviewEvent is a pull_request_review delivery.
type whReviewEvent struct {
	Review      *whReview `json:"review"`
	PullRequest *whPull   `json:"pull_request"`
}

// whCheckSuiteEvent is a check_suite delivery.
type whCheckSuiteEvent struct {
	CheckSuite *struct {
		Conclusion   *string     `json:"conclusion"`
		HeadBranch   *string     `json:"head_branch"`
		HeadSHA      string      `json:"head_sha"`
		PullRequests []whPullRef `json:"pull_requests"`
	} `json:"check_suite"`
}

// whWorkflowRunEvent is a workflow_run delivery.
type whWorkflowRunEvent struct {
	WorkflowRun *struct {
		Name           string      `json:"name"`
		Conclusion     *string     `json:"conclusion"`
		HeadBranch     *string     `json:"head_branch"`
		HeadSHA        string      `json:"head_sha"`
		HTMLURL        string      `json:"html_url"`
		PullRequests   []whPullRef `json:"pull_requests"`
		HeadRepository *whRepoName `json:"head_repository"`
	} `json:"workflow_run"`
	Workflow *struct {
		Name string `json:"name"`
	} `json:"workflow"`
}

// whWorkflowJobEvent is a workflow_job delivery.
type whWorkflowJobEvent struct {
	WorkflowJob *WorkflowJob `json:"workflow_job"`
}

// whStatusEvent is a status delivery (a commit status; it has no action).
type whStatusEvent struct {
	SHA         string  `json:"sha"`
	State       string  `json:"state"`
	Context     string  `json:"context"`
	Description *string `json:"description"`
	TargetURL   *string `json:"target_url"`
	Branches    []struct {
		Name string `json:"name"`
	} `json:"branches"`
}

// whMergeGroupEvent is a merge_group delivery.
type whMergeGroupEvent struct {
	Reason     string `json:"reason"`
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		HeadRef string `json:"head_ref"`
		BaseSHA string `json:"base_sha"`
		BaseRef string `json:"base_ref"`
	} `json:"merge_group"`
}

// whReviewCommentEvent is a pull_request_review_comment delivery.
type whReviewCommentEvent struct {
	Comment     *ReviewComment `json:"comment"`
	PullRequest *whPull        `json:"pull_request"`
}

// whReviewThreadEvent is a pull_request_review_thread delivery.
type whReviewThreadEvent struct {
	Thread *struct {
		NodeID   string          `json:"node_id"`
		Comments []ReviewComment `json:"comments"`
	} `json:"thread"`
	PullRequest *whPull `json:"pull_request"`
}

// whIssueCommentEvent is an issue_comment delivery.
type whIssueCommentEvent struct {
	Issue *struct {
		Number      int            `json:"number"`
		PullRequest map[string]any `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		HTMLURL           string  `json:"html_url"`
		User              *whUser `json:"user"`
		AuthorAssociation string  `json:"author_association"`
	} `json:"comment"`
}

// whPullNumbers returns the distinct positive PR numbers of refs whose base
// repository is repoID (when both ids are known): a check suite or run can
// list PRs of a fork's other repository, which are not this repo's PRs.
func whPullNumbers(refs []whPullRef, repoID int64) []int {
	var out []int
	seen := map[int]bool{}
	for _, r := range refs {
		if r.Number <= 0 || seen[r.Number] {
			continue
		}
		if repoID != 0 && r.Base.Repo.ID != 0 && r.Base.Repo.ID != repoID {
			continue
		}
		seen[r.Number] = true
		out = append(out, r.Number)
	}
	return out
}

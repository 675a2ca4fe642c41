package github

import (
	"errors"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// The subjects a provider fed by a repository's webhooks (the webhook
// provider's repository hook, the GitHub App's one webhook) accepts:
// github:owner/repo, github:owner/repo* and github:owner/repo#N, all on one
// repository per spec.

// ErrUnsupportedSubject is wrapped by a create error for a clause subject
// that is not github:owner/repo, github:owner/repo* or github:owner/repo#N.
var ErrUnsupportedSubject = errors.New("subject not supported by a webhook-fed GitHub provider: use github:owner/repo, github:owner/repo*, or github:owner/repo#N")

// ErrSeveralRepositories is wrapped by a create error for a spec whose
// clauses name more than one repository (one webhook route serves one
// repository's sentinels).
var ErrSeveralRepositories = errors.New("all match clauses must be on one repository")

// ClauseRepository returns the repository of a clause subject of the
// accepted forms (its Number zero), or ErrUnsupportedSubject.
func ClauseRepository(subject string) (sentinel.GitHubRef, error) {
	raw := strings.TrimSuffix(subject, "*")
	if raw != subject && strings.Contains(raw, "#") {
		return sentinel.GitHubRef{}, ErrUnsupportedSubject
	}
	ref, err := sentinel.ParseGitHubSubject(raw)
	if err != nil || ref.Repo == "" {
		return sentinel.GitHubRef{}, ErrUnsupportedSubject
	}
	ref.Number = 0
	return ref, nil
}

// SpecRepository returns the one repository every clause of spec names.
// Repository names compare case-insensitively, as on GitHub. A spec with no
// clause, a clause of another form or clauses on two repositories is an
// invalid setup (a *providers.Error wrapping ErrUnsupportedSubject or
// ErrSeveralRepositories).
func SpecRepository(spec sentinel.Spec) (string, error) {
	if len(spec.Match) == 0 {
		return "", invalidSpec(ErrUnsupportedSubject, "the spec has no match clause")
	}
	var repo string
	for _, c := range spec.Match {
		ref, err := ClauseRepository(c.Subject)
		if err != nil {
			return "", invalidSpec(err, "subject %q is not supported: use github:owner/repo, github:owner/repo*, or github:owner/repo#N", c.Subject)
		}
		switch {
		case repo == "":
			repo = ref.FullName()
		case !strings.EqualFold(repo, ref.FullName()):
			return "", invalidSpec(ErrSeveralRepositories, "all match clauses must be on one repository (%s and %s)", repo, ref.FullName())
		}
	}
	return repo, nil
}

func invalidSpec(err error, format string, args ...any) *providers.Error {
	e := providers.SetupError(format, args...)
	e.Reason, e.Err = providers.ReasonInvalid, err
	return e
}

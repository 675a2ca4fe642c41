package webhook

import (
	"errors"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// ErrUnsupportedSubject is wrapped by a create error for a clause subject
// that is not github:owner/repo, github:owner/repo* or github:owner/repo#N.
var ErrUnsupportedSubject = errors.New("subject not supported by the webhook provider: use github:owner/repo, github:owner/repo*, or github:owner/repo#N")

// ErrSeveralRepositories is wrapped by a create error for a spec whose
// clauses name more than one repository (one hook serves one repository).
var ErrSeveralRepositories = errors.New("all match clauses must be on one repository")

// parseClauseSubject returns the repository of a clause subject of the
// accepted forms.
func parseClauseSubject(subject string) (sentinel.GitHubRef, error) {
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

// specRepository returns the one repository every clause of spec names.
// Repository names compare case-insensitively, as on GitHub.
func specRepository(spec sentinel.Spec) (string, error) {
	if len(spec.Match) == 0 {
		return "", invalid(ErrUnsupportedSubject, "the spec has no match clause")
	}
	var repo string
	for _, c := range spec.Match {
		ref, err := parseClauseSubject(c.Subject)
		if err != nil {
			return "", invalid(err, "subject %q is not supported: use github:owner/repo, github:owner/repo*, or github:owner/repo#N", c.Subject)
		}
		switch {
		case repo == "":
			repo = ref.FullName()
		case !strings.EqualFold(repo, ref.FullName()):
			return "", invalid(ErrSeveralRepositories, "all match clauses must be on one repository (%s and %s)", repo, ref.FullName())
		}
	}
	return repo, nil
}

func invalid(err error, format string, args ...any) *providers.Error {
	e := providers.SetupError(format, args...)
	e.Reason, e.Err = providers.ReasonInvalid, err
	return e
}

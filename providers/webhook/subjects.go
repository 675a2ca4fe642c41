package webhook

import "github.com/agentproto/sentinel/providers/github"

// The subjects the provider accepts are those of every webhook-fed GitHub
// provider (github.ClauseRepository, github.SpecRepository): one
// repository per spec, since one hook serves one repository.
var (
	// ErrUnsupportedSubject is wrapped by a create error for a clause
	// subject that is not github:owner/repo, github:owner/repo* or
	// github:owner/repo#N.
	ErrUnsupportedSubject = github.ErrUnsupportedSubject
	// ErrSeveralRepositories is wrapped by a create error for a spec whose
	// clauses name more than one repository.
	ErrSeveralRepositories = github.ErrSeveralRepositories
)

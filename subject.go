package sentinel

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	// GitHub owner and repository names: no slash, hash, star or whitespace.
	ghNameRe = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// MaxSubjectLen bounds a subject's length.
const MaxSubjectLen = 512

// Subject is a parsed routing key of the form <scheme>:<path>. A clause
// subject may end in '*', which makes it a prefix match (Prefix is then true
// and Path excludes the star).
type Subject struct {
	Scheme string
	Path   string
	Prefix bool
}

// String renders the subject back to its canonical text.
func (s Subject) String() string {
	out := s.Scheme + ":" + s.Path
	if s.Prefix {
		out += "*"
	}
	return out
}

// ParseSubject parses a subject in <scheme>:<path> form. When allowPrefix is
// true a single trailing '*' is accepted (clause subjects); event subjects
// never carry it. The path must be non-empty and free of whitespace and of
// any other '*'.
func ParseSubject(raw string, allowPrefix bool) (Subject, error) {
	if raw == "" {
		return Subject{}, Errorf(CodeInvalidSubject, "subject is empty")
	}
	if len(raw) > MaxSubjectLen {
		return Subject{}, Errorf(CodeInvalidSubject, "subject is longer than %d bytes", MaxSubjectLen)
	}
	scheme, path, ok := strings.Cut(raw, ":")
	if !ok {
		return Subject{}, Errorf(CodeInvalidSubject, "subject %q is not of the form <scheme>:<path>", raw)
	}
	if !schemeRe.MatchString(scheme) {
		return Subject{}, Errorf(CodeInvalidSubject, "subject %q has an invalid scheme (letters, digits, '_' and '-', starting with a letter)", raw)
	}
	s := Subject{Scheme: scheme}
	if allowPrefix && strings.HasSuffix(path, "*") {
		s.Prefix = true
		path = strings.TrimSuffix(path, "*")
	}
	if strings.ContainsAny(path, "* \t\r\n\v\f") || strings.ContainsRune(path, 0) {
		return Subject{}, Errorf(CodeInvalidSubject, "subject %q has whitespace or a '*' that is not the last character", raw)
	}
	if path == "" && !s.Prefix {
		return Subject{}, Errorf(CodeInvalidSubject, "subject %q has an empty path", raw)
	}
	s.Path = path
	return s, nil
}

// SchemeOf returns the scheme of a subject (the text before the first ':'),
// or "" when there is none.
func SchemeOf(subject string) string {
	scheme, _, ok := strings.Cut(subject, ":")
	if !ok {
		return ""
	}
	return scheme
}

// GitHubRef names a GitHub owner, repository or pull request (or issue).
// Repo is empty for an owner; Number is 0 unless it names a PR or issue.
type GitHubRef struct {
	Owner  string
	Repo   string
	Number int
}

// FullName returns owner/repo.
func (r GitHubRef) FullName() string { return r.Owner + "/" + r.Repo }

// Subject returns the most specific subject for the reference.
func (r GitHubRef) Subject() string {
	switch {
	case r.Repo == "":
		return "github:" + r.Owner
	case r.Number == 0:
		return "github:" + r.FullName()
	default:
		return "github:" + r.FullName() + "#" + strconv.Itoa(r.Number)
	}
}

// Subjects returns the full hierarchy, most specific first: PR, repository,
// owner.
func (r GitHubRef) Subjects() []string {
	out := make([]string, 0, 3)
	if r.Repo != "" && r.Number > 0 {
		out = append(out, "github:"+r.FullName()+"#"+strconv.Itoa(r.Number))
	}
	if r.Repo != "" {
		out = append(out, "github:"+r.FullName())
	}
	return append(out, "github:"+r.Owner)
}

// ParseGitHubSubject parses github:owner, github:owner/repo or
// github:owner/repo#N (N >= 1). A trailing '*' is not accepted here. Owner
// and repository are [A-Za-z0-9_.-]+ but never "." or "..": those are path
// segments (github:../x would make gh call /repos/../x/...), refused with
// invalid_subject.
func ParseGitHubSubject(raw string) (GitHubRef, error) {
	rest, ok := strings.CutPrefix(raw, "github:")
	if !ok {
		return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q is not a github: subject", raw)
	}
	var ref GitHubRef
	if path, num, hasNum := strings.Cut(rest, "#"); hasNum {
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || num != strconv.Itoa(n) {
			return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q has an invalid number after '#'", raw)
		}
		ref.Number = n
		rest = path
	}
	owner, repo, hasRepo := strings.Cut(rest, "/")
	if !ghNameRe.MatchString(owner) {
		return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q has an invalid owner", raw)
	}
	if IsDotSegment(owner) {
		return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q has %q as its owner, a path segment, not a GitHub name", raw, owner)
	}
	ref.Owner = owner
	if hasRepo {
		if !ghNameRe.MatchString(repo) {
			return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q has an invalid repository", raw)
		}
		if IsDotSegment(repo) {
			return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q has %q as its repository, a path segment, not a GitHub name", raw, repo)
		}
		ref.Repo = repo
	} else if ref.Number > 0 {
		return GitHubRef{}, Errorf(CodeInvalidSubject, "subject %q names a number without a repository", raw)
	}
	return ref, nil
}

// IsDotSegment reports whether name is "." or "..", which no GitHub owner
// or repository may be: in a REST path they are path segments.
func IsDotSegment(name string) bool { return name == "." || name == ".." }

// IsGitHubPRSubject reports whether raw is github:owner/repo#N.
func IsGitHubPRSubject(raw string) bool {
	ref, err := ParseGitHubSubject(raw)
	return err == nil && ref.Repo != "" && ref.Number > 0
}

// IsGitHubRepoSubject reports whether raw is github:owner/repo.
func IsGitHubRepoSubject(raw string) bool {
	ref, err := ParseGitHubSubject(raw)
	return err == nil && ref.Repo != "" && ref.Number == 0
}

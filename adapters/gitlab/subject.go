package gitlab

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Scheme is the subject scheme of the adapter.
const Scheme = "gitlab"

// segmentRe is one segment of a GitLab namespace or project path.
var segmentRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// Ref names a project (IID 0) or one of its merge requests.
type Ref struct {
	Project string // group[/subgroup...]/project
	IID     int
}

// Subject returns the most specific subject of r.
func (r Ref) Subject() string {
	if r.IID == 0 {
		return Scheme + ":" + r.Project
	}
	return Scheme + ":" + r.Project + "!" + strconv.Itoa(r.IID)
}

// Subjects returns r's hierarchy, most specific first.
func (r Ref) Subjects() []string {
	if r.IID == 0 {
		return []string{r.Subject()}
	}
	return []string{r.Subject(), Ref{Project: r.Project}.Subject()}
}

// ParseSubject parses gitlab:<group>/<project> or
// gitlab:<group>/<project>!<iid> (iid >= 1). Path segments are GitLab's
// (letters, digits, '_', '-', '.'; never "." or ".." and never starting
// with '.' or '-'), at least a namespace and a project.
func ParseSubject(raw string) (Ref, error) {
	rest, ok := strings.CutPrefix(raw, Scheme+":")
	if !ok {
		return Ref{}, fmt.Errorf("%q is not a gitlab: subject", raw)
	}
	path, iid, hasIID := strings.Cut(rest, "!")
	segs := strings.Split(path, "/")
	if len(segs) < 2 || len(path) > 255 {
		return Ref{}, fmt.Errorf("%q: want gitlab:<group>/<project> or gitlab:<group>/<project>!<iid>", raw)
	}
	for _, s := range segs {
		if !segmentRe.MatchString(s) || strings.Trim(s, ".") == "" {
			return Ref{}, fmt.Errorf("%q: %q is not a GitLab path segment", raw, s)
		}
	}
	r := Ref{Project: path}
	if hasIID {
		n, err := strconv.Atoi(iid)
		if err != nil || n < 1 || strconv.Itoa(n) != iid {
			return Ref{}, fmt.Errorf("%q: the merge request iid must be a positive number", raw)
		}
		r.IID = n
	}
	return r, nil
}

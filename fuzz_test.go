package sentinel_test

import (
	"strings"
	"testing"

	"github.com/agentproto/sentinel"
)

func FuzzParseSubject(f *testing.F) {
	for _, s := range []string{"github:a/b#1", "github:a/b*", "jira:X-1", "", ":", "github:", "a:b c", "github:a/b#01", "x:*", "github:../b#1", "github:a/..", "github:./x", "github:a/.github"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := sentinel.ParseSubject(raw, true)
		if err != nil {
			return
		}
		if s.String() != raw {
			t.Fatalf("round trip: %q -> %q", raw, s.String())
		}
		if strings.ContainsAny(s.Path, " \t\n*") {
			t.Fatalf("path %q kept forbidden characters", s.Path)
		}
		if ref, err := sentinel.ParseGitHubSubject(raw); err == nil {
			if sentinel.IsDotSegment(ref.Owner) || sentinel.IsDotSegment(ref.Repo) {
				t.Fatalf("%q accepted a path segment as a name: %+v", raw, ref)
			}
			if ref.Subject() != raw {
				t.Fatalf("github round trip: %q -> %q", raw, ref.Subject())
			}
			subs := ref.Subjects()
			if subs[0] != raw || !strings.HasPrefix(subs[len(subs)-1], "github:") {
				t.Fatalf("bad hierarchy %v", subs)
			}
		}
	})
}

func FuzzGlobMatch(f *testing.F) {
	f.Add("github.*.completed", "github.check_suite.completed")
	f.Add("*a*b*", "xxaxxbxx")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := sentinel.GlobMatch(pattern, name)
		if !strings.Contains(pattern, "*") && got != (pattern == name) {
			t.Fatalf("literal pattern %q vs %q: %v", pattern, name, got)
		}
		if pattern == "*" && !got {
			t.Fatalf("* must match %q", name)
		}
		if got && !strings.HasPrefix(name, strings.Split(pattern, "*")[0]) {
			t.Fatalf("%q matched %q without its literal prefix", pattern, name)
		}
	})
}

func FuzzParsePRURL(f *testing.F) {
	for _, s := range []string{"https://github.com/a/b/pull/1", "github.com/a/b/pull/2/files", "https://github.com/a/b/pull/0", "http://www.github.com/x/y/pull/3?z#w", "https://github.com/../b/pull/1", "https://github.com/a/./pull/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		ref, err := sentinel.ParsePRURL(raw)
		if err != nil {
			return
		}
		if ref.Number < 1 || ref.Owner == "" || ref.Repo == "" || sentinel.IsDotSegment(ref.Owner) || sentinel.IsDotSegment(ref.Repo) {
			t.Fatalf("accepted %q as %+v", raw, ref)
		}
		if _, err := sentinel.ParseGitHubSubject(ref.Subject()); err != nil {
			t.Fatalf("%q gave an unparseable subject %q: %v", raw, ref.Subject(), err)
		}
	})
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"e","source":"s","type":"t","subject":"a:b","time":"","data":{},"summary":"","subjects":["a:b"],"terminal":false}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := sentinel.ParseEnvelope(raw, nil)
		if err != nil {
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("accepted envelope fails Validate: %v", err)
		}
	})
}

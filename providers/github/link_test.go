package github

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLinkRel(t *testing.T) {
	tests := []struct {
		name, header, rel, want string
	}{
		{name: "github", header: `<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last"`, rel: "next", want: "https://api.github.com/repositories/1/issues?page=2"},
		{name: "last", header: `<https://a/x?page=2>; rel="next", <https://a/x?page=5>; rel="last"`, rel: "last", want: "https://a/x?page=5"},
		{name: "comma in url", header: `<https://a/x?labels=a,b&page=2>; rel="next"`, rel: "next", want: "https://a/x?labels=a,b&page=2"},
		{name: "several rels", header: `<https://a/x?page=3>; rel="next last"`, rel: "last", want: "https://a/x?page=3"},
		{name: "unquoted and spaced", header: ` <https://a/x?page=3> ; REL = next`, rel: "next", want: "https://a/x?page=3"},
		{name: "absent", header: `<https://a/x?page=1>; rel="prev"`, rel: "next"},
		{name: "empty", header: "", rel: "next"},
		{name: "unterminated", header: `<https://a/x?page=1; rel="next"`, rel: "next"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, linkRel(tc.header, tc.rel))
		})
	}
}

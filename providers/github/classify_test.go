package github

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
)

func TestClassifyRunErrorAuthInEveryMode(t *testing.T) {
	cases := []struct {
		name string
		err  *ExitError
		want providers.Reason
	}{
		{"interactive", &ExitError{Args: "api user", Code: 4, Stderr: "To get started with GitHub CLI, please run:  gh auth login"}, providers.ReasonAuth},
		{"ci mode", &ExitError{Args: "api user", Code: 4, Stderr: "gh: To use GitHub CLI in automation, set the GH_TOKEN environment variable."}, providers.ReasonAuth},
		{"exit 4 alone", &ExitError{Args: "api user", Code: 4}, providers.ReasonAuth},
		{"no token", &ExitError{Args: "auth token", Code: 1, Stderr: "no oauth token"}, providers.ReasonAuth},
		{"network", &ExitError{Args: "api user", Code: 1, Stderr: "error connecting to api.github.com"}, providers.ReasonNetwork},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := classifyRunError(tc.err)
			require.Equal(t, tc.want, providers.ReasonOf(err))
			if tc.want == providers.ReasonAuth {
				require.Contains(t, err.Error(), "gh auth login")
			}
		})
	}
}

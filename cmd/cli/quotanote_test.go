package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadinessNoteShowsEachCredentialsBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		info map[string]any
		want string
	}{
		{"none", map[string]any{}, ""},
		{"source and budget", map[string]any{"credentialSource": "GH_TOKEN", "quota": []any{
			map[string]any{"credential": "token", "resource": "core", "remaining": 4990.0, "limit": 5000.0},
		}}, "credentials: GH_TOKEN; quota token 4990/5000"},
		{"paused installation", map[string]any{"quota": []any{
			map[string]any{"credential": "installation:7", "remaining": 12.0, "limit": 5000.0, "pausedUntil": "2026-11-01T10:01:00Z"},
		}}, "quota installation:7 12/5000 paused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, readinessNote(tc.info))
		})
	}
}

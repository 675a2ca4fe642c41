package subscriptions

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An allowlist entry matches its own scheme, host and port, and its path
// only at a segment boundary: a look-alike host, another port or a longer
// path segment is not allowlisted (it goes through the challenge).
func TestCallbackAllowlistComparesParsedURLs(t *testing.T) {
	list := []string{"https://hooks.example.com", "https://api.example.org:8443/mcp/hooks", "http://127.0.0.1:9000/"}
	cases := []struct {
		name string
		url  string
		want bool
	}{
		{"the host", "https://hooks.example.com/any/path", true},
		{"the host, no path", "https://hooks.example.com", true},
		{"host case", "https://HOOKS.example.com/x", true},
		{"default port spelled out", "https://hooks.example.com:443/x", true},
		{"look-alike host (prefix)", "https://hooks.example.com.evil.net/", false},
		{"look-alike host (suffix)", "https://hooks.example.community/", false},
		{"another port", "https://hooks.example.com:8443/x", false},
		{"another scheme", "http://hooks.example.com/x", false},
		{"path entry", "https://api.example.org:8443/mcp/hooks", true},
		{"below the path", "https://api.example.org:8443/mcp/hooks/abc", true},
		{"a longer segment", "https://api.example.org:8443/mcp/hooksevil", false},
		{"above the path", "https://api.example.org:8443/mcp", false},
		{"path entry, default port", "https://api.example.org/mcp/hooks", false},
		{"dot segments out of the path", "https://api.example.org:8443/mcp/hooks/../evil", false},
		{"encoded slash", "https://api.example.org:8443/mcp/hooks%2F..%2Fevil", false},
		{"slash entry", "http://127.0.0.1:9000/anything", true},
		{"query does not matter", "https://hooks.example.com/x?y=1", true},
		{"unparseable", "https://hooks.example.com:bad/", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, allowlisted(list, tc.url), tc.url)
		})
	}
}

// Entries that are not absolute http(s) URLs (or carry userinfo, a query
// or a fragment) are refused at start, naming the entry.
func TestCallbackAllowlistEntriesAreValidated(t *testing.T) {
	for _, bad := range []string{"hooks.example.com", "https://", "ftp://hooks.example.com", "https://u:p@hooks.example.com", "https://h.example.com/?q=1", "https://h.example.com/#f"} {
		cfg := DefaultConfig()
		cfg.CallbackAllowlist = []string{bad}
		err := cfg.Validate()
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "mcp_events.callback_allowlist")
	}
	cfg := DefaultConfig()
	cfg.CallbackAllowlist = []string{"https://hooks.example.com", "http://127.0.0.1:9000/x/"}
	require.NoError(t, cfg.Validate())
}

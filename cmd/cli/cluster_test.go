package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
)

// An external-mode view renders what is unknown as unknown; remove sends
// force only when asked and names the fix of each refusal.
func TestClusterVerbs(t *testing.T) {
	view := `{"ok":true,"cluster":{"node":"a","mode":"external","writable":false,"writableError":"cluster unavailable: no heartbeat stored yet",
		"members":[{"name":"a","apiUrl":"http://a:7777","beatAt":"2026-01-01T00:00:00Z","live":true,"self":true},{"name":"b","live":false}],
		"routes":[],"routesKnown":false,
		"meta":{"known":false,"peers":[],"note":"visible to the NATS system account only"},
		"assets":[{"name":"SENTINEL_EVENTS","kind":"stream","replicas":3,"leader":"s1","state":"lagging","peers":[{"name":"s1","leader":true,"current":true},{"name":"s2","current":false}]}],
		"leases":[{"item":"poll.0","owner":"a"},{"item":"poll.1","owner":""},{"item":"job.expiry","owner":"b"}],
		"delivery":{"note":"every live node pulls","partitions":[{"partition":0,"consumer":"deliver-0","leader":"s1","pending":4,"ackPending":1,"waiting":2}]},
		"errors":["leases: timeout"]}}`
	cases := []struct {
		name     string
		args     []string
		status   int
		body     string
		wantCode int
		wantPath string
		wantBody map[string]any
		wantOut  []string
		wantErr  []string
	}{
		{
			name: "view", args: []string{"cluster"}, status: 200, body: view, wantPath: "/cluster",
			wantOut: []string{"a (external)", "no: cluster unavailable", "a (this node)", "unknown (the node uses an external NATS deployment)",
				"unknown: visible to the NATS system account only", "SENTINEL_EVENTS  stream  3         s1      lagging  s2",
				"a                       1 (0)", "(nobody: handing over)  1 (1)", "b                       -                expiry",
				"0          deliver-0  s1      4        1            2", "NOT READ", "leases: timeout"},
		},
		{
			name: "remove", args: []string{"cluster", "remove", "n3"}, status: 200, wantPath: "/cluster/remove",
			body:     `{"ok":true,"removed":{"node":"n3","peerRemoved":true,"memberRemoved":true,"leasesReleased":12}}`,
			wantBody: map[string]any{"node": "n3", "force": nil},
			wantOut:  []string{"Removed n3: its JetStream peer left the meta group, its heartbeat was deleted, 12 leases released."},
		},
		{
			name: "remove --force", args: []string{"cluster", "remove", "n3", "--force", "--json"}, status: 200, wantPath: "/cluster/remove",
			body:     `{"ok":true,"removed":{"node":"n3","peerRemoved":false,"memberRemoved":true,"leasesReleased":0,"note":"nats server cluster peer-remove"}}`,
			wantBody: map[string]any{"node": "n3", "force": true},
			wantOut:  []string{`"note": "nats server cluster peer-remove"`},
		},
		{
			name: "a live node is refused with the fix", args: []string{"cluster", "remove", "n2"}, status: 409, wantPath: "/cluster/remove",
			body: `{"error":"node_live","message":"node n2 is live"}`, wantCode: api.ExitInvalid,
			wantErr: []string{"node_live: node n2 is live", "--force"},
		},
		{
			name: "an unknown node", args: []string{"cluster", "remove", "n9"}, status: 404, wantPath: "/cluster/remove",
			body: `{"error":"node_not_found","message":"no node n9"}`, wantCode: api.ExitNotFound, wantErr: []string{"sentinel cluster"},
		},
		{name: "usage: no node", args: []string{"cluster", "remove"}, wantCode: api.ExitUsage, wantErr: []string{"name of the node"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNode{status: tc.status, body: tc.body}
			url := f.start(t)
			code, out, errOut := runVerb(t, url, "", tc.args...)
			require.Equalf(t, tc.wantCode, code, "stdout %q stderr %q", out, errOut)
			if tc.wantPath != "" {
				require.Equal(t, tc.wantPath, f.path)
			}
			for k, v := range tc.wantBody {
				require.Equal(t, v, f.got[k], k)
			}
			for _, s := range tc.wantOut {
				require.Contains(t, out, s)
			}
			for _, s := range tc.wantErr {
				require.Contains(t, errOut, s)
			}
		})
	}
}

package embedded_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/bus/embedded"
)

func withListener(token string) bustest.Option {
	return func(_ *bus.Config, e *embedded.Config) { e.Listen, e.ListenToken = "127.0.0.1:-1", token }
}

func peerNames(m embedded.MetaState) []string {
	var out []string
	for _, p := range m.Peers {
		out = append(out, p.Name)
	}
	return out
}

// A clustered server authenticates its clients itself (to let its own
// process into the system account): the listen token still admits a
// client, anything else is refused.
func TestClusteredListenerKeepsTokenAuth(t *testing.T) {
	envs := bustest.StartCluster(t, 3, withListener("listen-secret"))
	url := envs[0].Server.ClientURL()
	nc, err := nats.Connect(url, nats.Token("listen-secret"))
	require.NoError(t, err)
	nc.Close()
	for name, opt := range map[string]nats.Option{
		"wrong token": nats.Token("guess"),
		"no token":    func(*nats.Options) error { return nil },
		"user/pass":   nats.UserInfo("sentinel-system", "listen-secret"),
	} {
		_, err := nats.Connect(url, opt, nats.MaxReconnects(0))
		require.Error(t, err, name)
	}
}

// Routes and the meta group are visible; a stopped server is removed from
// the meta group through the system account; an unknown name is named.
func TestRoutesMetaAndRemovePeer(t *testing.T) {
	envs := bustest.StartCluster(t, 3)
	bustest.Eventually(t, 30*time.Second, func() bool {
		rs, err := envs[0].Server.Routes()
		return err == nil && len(rs) == 2 && rs[0].Name == "n2" && rs[1].Name == "n3" && rs[0].Connections > 0
	}, "n1 routes to n2 and n3")
	bustest.Eventually(t, 30*time.Second, func() bool {
		m, ok := envs[1].Server.Meta()
		return ok && m.Leader != "" && len(m.Peers) == 3
	}, "a meta leader and three peers")
	m, _ := envs[1].Server.Meta()
	require.Equal(t, []string{"n1", "n2", "n3"}, peerNames(m))
	require.True(t, m.Peers[1].Self)

	envs[2].Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.ErrorIs(t, envs[0].Server.RemovePeer(ctx, "n9"), embedded.ErrPeerNotFound)
	var err error
	bustest.Eventually(t, 30*time.Second, func() bool {
		err = envs[0].Server.RemovePeer(ctx, "n3")
		return err == nil
	}, "n3 removed: %v", &err)
	for _, e := range envs[:2] {
		bustest.Eventually(t, 30*time.Second, func() bool {
			m, ok := e.Server.Meta()
			return ok && len(m.Peers) == 2
		}, "n3 left the meta group")
		m, _ := e.Server.Meta()
		require.Equal(t, []string{"n1", "n2"}, peerNames(m))
	}
}

func TestSingleServerHasNoMeta(t *testing.T) {
	env := bustest.Start(t)
	_, ok := env.Server.Meta()
	require.False(t, ok)
	rs, err := env.Server.Routes()
	require.NoError(t, err)
	require.Empty(t, rs)
	require.ErrorIs(t, env.Server.RemovePeer(context.Background(), "x"), embedded.ErrNotClustered)
}

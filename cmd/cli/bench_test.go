package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
)

// TestBenchFlags checks the usage errors of `sentinel bench`.
func TestBenchFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--skip", "nope"}, {"bench", "--fsync", "sometimes"},
		{"bench", "--cluster", "2"}, {"bench", "--cluster", "3", "--in-process"}, {"bench", "--kills", "-1"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		require.Equal(t, api.ExitUsage, code, "%v: %s", args, errOut.String())
	}
}

// TestBenchJSON runs a tiny scale phase in-process and decodes --json.
func TestBenchJSON(t *testing.T) {
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"bench", "--in-process", "--skip", "push,poll", "--sentinels", "20",
		"--list-requests", "2", "--ticks", "1", "--fsync", "default", "--dir", t.TempDir(), "--json"},
		IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	require.Equal(t, api.ExitOK, code, errOut.String())
	var rep struct {
		Scale struct {
			Sentinels int    `json:"sentinels"`
			Mode      string `json:"mode"`
			Fsync     string `json:"fsync"`
		} `json:"scale"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.Equal(t, 20, rep.Scale.Sentinels)
	require.Equal(t, "in-process", rep.Scale.Mode)
	require.Equal(t, "default", rep.Scale.Fsync)
}

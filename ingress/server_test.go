package ingress_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress"
)

func TestHeaderBlocksAreCapped(t *testing.T) {
	n := startNode(t, ingress.Config{})
	bearer := []string{"Authorization", "Bearer " + token}
	a := n.do(t, "GET", "/reqid", "", append([]string{"X-Pad", strings.Repeat("x", 32<<10)}, bearer...)...)
	require.Equal(t, http.StatusNoContent, a.status, "32 KiB of headers pass")
	<-n.reqIDs
	a = n.do(t, "GET", "/reqid", "", append([]string{"X-Pad", strings.Repeat("x", ingress.MaxHeaderBytes+8<<10)}, bearer...)...)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, a.status, "over MaxHeaderBytes (net/http's 1 MiB default would take it)")
}

func TestRequestIDsAreTheNodes(t *testing.T) {
	n := startNode(t, ingress.Config{})
	ids := map[string]bool{}
	for range 2 {
		a := n.do(t, "GET", "/reqid", "", "Authorization", "Bearer "+token, "X-Request-Id", "forged")
		require.Equal(t, http.StatusNoContent, a.status)
		id := <-n.reqIDs
		require.NotEmpty(t, id)
		require.NotEqual(t, "forged", id, "a client's X-Request-Id is never taken")
		ids[id] = true
	}
	require.Len(t, ids, 2, "every request gets its own id")
}

package bustest

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// RouteHandshake connects to a route listener at addr as a route of
// cluster would, sends CONNECT with user and pass ("" for none) and a
// PING, and returns the server's first answer after its INFO: "PONG" when
// it took the route, the -ERR line (or "closed: ...") when it refused it.
// It is the probe of the route-authentication tests.
func RouteHandshake(t testing.TB, addr, cluster, user, pass string) string {
	t.Helper()
	return RouteHandshakeTLS(t, addr, cluster, user, pass, nil)
}

// RouteHandshakeTLS is RouteHandshake over TLS with tc, when tc is set (a
// TLS route listener handshakes before its INFO). A failed handshake
// answers "tls: ..." (the server refused the client's certificate, or the
// client the server's); a listener that never sends INFO "closed: ...".
func RouteHandshakeTLS(t testing.TB, addr, cluster, user, pass string, tc *tls.Config) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("bustest: dial the route listener: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	conn := c
	if tc != nil {
		// A TLS route listener handshakes first and sends INFO inside TLS.
		tlsc := tls.Client(c, tc)
		if err := tlsc.Handshake(); err != nil {
			return "tls: " + err.Error()
		}
		conn = tlsc
	}
	br := bufio.NewReader(conn)
	info, err := br.ReadString('\n')
	if err != nil {
		return "closed: no INFO: " + err.Error()
	}
	if !strings.HasPrefix(info, "INFO ") {
		t.Fatalf("bustest: the route listener sent %q before INFO", info)
	}
	connect, _ := json.Marshal(map[string]any{"echo": false, "verbose": false, "pedantic": false, "user": user, "pass": pass,
		"tls_required": tc != nil, "name": "intruder", "cluster": cluster, "headers": true})
	if _, err := conn.Write([]byte("CONNECT " + string(connect) + "\r\nPING\r\n")); err != nil {
		return "closed: " + err.Error()
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "closed: " + err.Error()
		}
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "INFO ") {
			return line
		}
	}
}

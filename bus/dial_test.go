package bus_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
)

// A nats.url that carries credentials never shows them in Dial's error,
// whatever failed: a refused connection, an unparseable URL, a server
// that is not NATS.
func TestDialErrorsNeverShowURLCredentials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	// A listener that accepts and says nothing NATS-like.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = mute.Close() })
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			_ = c.Close()
		}
	}()
	const secret = "s3cret-pw-never-shown"
	cases := []struct {
		name string
		urls []string
	}{
		{"refused", []string{"nats://sentinel:" + secret + "@127.0.0.1:" + itoa(port)}},
		{"token in userinfo", []string{"nats://" + secret + "@127.0.0.1:" + itoa(port)}},
		{"bad port", []string{"nats://sentinel:" + secret + "@127.0.0.1:notaport"}},
		{"not nats", []string{"nats://sentinel:" + secret + "@" + mute.Addr().String()}},
		{"second of two", []string{"nats://127.0.0.1:" + itoa(port), "nats://sentinel:" + secret + "@127.0.0.1:" + itoa(port)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_, err := bus.Dial(ctx, bus.ClientConfig{URLs: tc.urls, Name: "test"})
			require.Error(t, err)
			require.NotContains(t, err.Error(), secret)
			require.Contains(t, err.Error(), "[redacted]", "the error still names the server: %v", err)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
